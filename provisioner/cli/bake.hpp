#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock bake RECIPE --push REGISTRY/ORG/NAME:TAG [--from REF] [--name VM] [--dry-run]`:
/// every create step, then stop, push through Lume, resolve and check the pushed digest, tag it
/// sha256-<hex>, and record it in the recipe's lock file and the host state. Prints the pinned
/// reference REGISTRY/ORG/NAME@sha256:… (stdout's last line).
void register_bake(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
