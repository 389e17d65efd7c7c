#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock exec NAME ENTRY [-- ARGS…]`: runs an enabled program once over SSH with exactly
/// its agent's environment (shim injected), prints its output and exits with its exit status.
/// Programs that are not on the enablement list are refused (exit 2).
void register_exec(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
