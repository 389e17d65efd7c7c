#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace lume_unlock::cli {

/// Adds every command to `app`. Each command's callback runs it with `context` and stores its
/// exit code in `exit_code`.
void register_commands(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
