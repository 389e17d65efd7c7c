#pragma once

// What the SshSession files share (ssh_session.cpp: connecting, the pinned host key, logging in;
// ssh_transfer.cpp: commands, SFTP and streamed files): the libssh handles of one connection and
// how its errors name the guest. Nothing outside provisioner/guest/ includes it.

#include "guest/ssh_session.hpp"
#include "util/text.hpp"

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <string>

namespace lume_unlock::guest {

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

  /// "VM 'demo' (lume@127.0.0.1:22)": who we were talking to, for every error.
  std::string target() const {
    return "VM '" + options.vm + "' (" + options.user + "@" + options.host + ":" +
           std::to_string(options.port) + ")";
  }

  std::string ssh_error() const { return util::trim(ssh_get_error(session)); }
};

} // namespace lume_unlock::guest
