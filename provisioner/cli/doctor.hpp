#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock doctor`: checks what lume-unlock needs on this host — Lume, the state directory,
/// the ParavirtualizedGraphics host preference (macOS), free disk for images, the recipe's
/// registry, the shim bundle — one line each with ok/warn/fail/skip and the fix.
void register_doctor(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
