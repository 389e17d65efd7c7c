#pragma once

#include "guest/ssh_session.hpp"

#include <string>

namespace lume_unlock::guest {

/// The guest connection options of DESIGN §9, accepted after the name of every command that
/// reaches a guest (`lume-unlock ssh vm1 --ssh-port 2222 -- uname -m`); the flags are
/// registered by cli/connection_flags.hpp.
struct ConnectionOptions {
  std::string user = "lume";                               ///< --ssh-user
  int port = 22;                                           ///< --ssh-port
  std::string password_env = "LUME_UNLOCK_GUEST_PASSWORD"; ///< --ssh-password-env VAR
  bool accept_new_host_key = false;                        ///< --ssh-accept-new-host-key
};

/// The image's default guest password, used when the variable named by --ssh-password-env is
/// unset (Lume's unattended setup creates lume/lume).
inline constexpr const char* k_default_guest_password = "lume";

/// Session options for `vm` at `host`: the password is read here from the environment variable
/// the options name (the image default when it is unset or empty), never from argv.
SshSessionOptions session_options(const ConnectionOptions& options,
                                  const std::string& vm,
                                  const std::string& host,
                                  const std::string& state_dir);

} // namespace lume_unlock::guest
