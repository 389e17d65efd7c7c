#include "guest/connection_options.hpp"

#include <cstdlib>

namespace lume_unlock::guest {

SshSessionOptions session_options(const ConnectionOptions& options,
                                  const std::string& vm,
                                  const std::string& host,
                                  const std::string& state_dir) {
  SshSessionOptions session;
  session.vm = vm;
  session.host = host;
  session.port = options.port;
  session.user = options.user;
  session.state_dir = state_dir;
  session.password_env = options.password_env;
  session.accept_new_host_key = options.accept_new_host_key;
  const char* secret =
      options.password_env.empty() ? nullptr : std::getenv(options.password_env.c_str());
  session.password_from_environment = secret != nullptr && *secret != '\0';
  session.password = session.password_from_environment ? secret : k_default_guest_password;
  return session;
}

} // namespace lume_unlock::guest
