#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock resolve REF [--insecure-registry HOST]...`: prints the verified manifest digest
/// of REF (with --json also media type, size and the pinned reference).
void register_resolve(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
