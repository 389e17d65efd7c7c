#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock status NAME [--ssh-…]`: compares the host's provenance record with the guest
/// now (shim files and hashes, guard file, enablement.json, agent plists, agents loaded, the
/// guest's record) and reports drift per item; exit 6 on drift, 0 when everything matches.
void register_status(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
