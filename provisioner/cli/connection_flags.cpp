#include "cli/connection_flags.hpp"

namespace lume_unlock::cli {

void add_connection_options(CLI::App& command, guest::ConnectionOptions& options) {
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

} // namespace lume_unlock::cli
