#pragma once

#include <libssh/libssh.h>

#include <string>

namespace lume_unlock::guest {

/// Logs in with keyboard-interactive, answering every hidden prompt (PAM's "Password:") with
/// `password`: macOS sshd with PAM may offer the password only this way. Returns libssh's
/// SSH_AUTH_* code; a prompt that echoes (a question other than the password) or more rounds
/// than PAM needs count as SSH_AUTH_DENIED. The password goes only to libssh's answer buffer,
/// never to a message.
int login_keyboard_interactive(ssh_session session, const std::string& password);

} // namespace lume_unlock::guest
