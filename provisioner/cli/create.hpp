#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock create NAME [--recipe FILE] [--from REF] [--cpu N] [--memory SIZE]
/// [--bundle DIR|ARCHIVE] [--dry-run] [--insecure-registry HOST]… [--ssh-…]`: the create plan
/// of DESIGN §8 (preflight, image, resize, boot, connect, facts, install-shim, probe,
/// enablement, provenance), printed with --dry-run, applied otherwise, then a summary.
void register_create(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
