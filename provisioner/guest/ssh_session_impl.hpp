#pragma once

// SshSession's members are defined in one file per concern (ssh_session.cpp: connecting;
// ssh_host_key.cpp: pinning; ssh_login.cpp: logging in; ssh_exec.cpp: commands;
// sftp_transfer.cpp: SFTP). This private header is the state they share: the libssh handles of
// one connection and how its errors name the guest. Nothing outside provisioner/guest/ includes
// it.

#include "guest/ssh_session.hpp"

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <string>

namespace lume_unlock::guest {

/// `text` without trailing newlines, carriage returns and spaces (libssh's and the shell's
/// messages end with them).
inline std::string trim_end(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

struct SshSession::Impl {
  SshSessionOptions options;
  VmKeyPaths paths;
  ssh_session session = nullptr;
  sftp_session sftp = nullptr;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (sftp != nullptr) {
      sftp_free(sftp);
    }
    if (session != nullptr) {
      ssh_disconnect(session);
      ssh_free(session);
    }
  }

  /// "VM 'demo' (lume@127.0.0.1:22)" — who we were talking to, for every error.
  std::string target() const {
    return "VM '" + options.vm + "' (" + options.user + "@" + options.host + ":" +
           std::to_string(options.port) + ")";
  }

  std::string ssh_error() const { return trim_end(ssh_get_error(session)); }
};

} // namespace lume_unlock::guest
