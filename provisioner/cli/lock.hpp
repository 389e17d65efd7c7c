#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock lock RECIPE [--insecure-registry HOST]...`: resolves every reference of the
/// recipe to a verified digest and writes the lock file next to it.
void register_lock(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
