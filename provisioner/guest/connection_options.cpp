#include "guest/connection_options.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>

namespace lume_unlock::guest {

void add_connection_options(CLI::App& command, ConnectionOptions& options) {
  command.add_option("--ssh-user", options.user, "Guest user to log in as")
      ->capture_default_str()
      ->group("Guest connection");
  command.add_option("--ssh-port", options.port, "Guest SSH port")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535))
      ->group("Guest connection");
  command
      .add_option("--ssh-password-env",
                  options.password_env,
                  "Environment variable holding the guest password for the first login (when "
                  "unset, the image default 'lume'); never pass passwords on the command line")
      ->capture_default_str()
      ->group("Guest connection");
  command
      .add_flag("--ssh-accept-new-host-key",
                options.accept_new_host_key,
                "Pin the guest's host key even if it differs from the one pinned before (after "
                "recreating the VM)")
      ->group("Guest connection");
}

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
