#pragma once

#include "guest/ssh_session.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// Adds the guest connection flags of DESIGN §9 to `command`, bound to `options`: --ssh-user,
/// --ssh-port (1-65535), --ssh-password-env and --ssh-accept-new-host-key, in the help group
/// "Guest connection".
void add_connection_options(CLI::App& command, guest::ConnectionOptions& options);

} // namespace lume_unlock::cli
