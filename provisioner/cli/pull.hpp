#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace lume_unlock::cli {

/// `lume-unlock pull REF NAME [--dry-run] [--insecure-registry HOST]…`: resolve REF to a verified
/// digest, have Lume pull it into VM NAME, check Lume's .manifest-digest against it, and record
/// the provenance at <state>/vms/NAME/provenance.json (DESIGN §7, §8 step 2).
void register_pull(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
