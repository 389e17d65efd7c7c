#pragma once

#include "cli/context.hpp"
#include "guest/session.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace lume_unlock::cli {

/// Runs `command_line` in the guest once and passes on what it printed: with --json one document
/// (`fields` plus exit_status, stdout and stderr), otherwise its stdout on `out` and its stderr on
/// `err`, as they came. Returns the command's exit status, which the caller makes its own.
/// Throws Error (guest) naming `subject` ("exec 'x'", "command in VM 'x'") when the command
/// ended without an exit status, and the session's Error when it could not run it.
int run_remote_command(Context& context,
                       guest::GuestSession& session,
                       const std::string& command_line,
                       const std::string& subject,
                       nlohmann::json fields);

} // namespace lume_unlock::cli
