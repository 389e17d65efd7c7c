#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock report NAME [--out DIR] [--label TEXT] [--dry-run]`: writes the VM's report
/// folder (report.json, report.md, speedup.svg, the raw inputs) from its records; with --json
/// prints report.json. `lume-unlock report --check DIR NAME [--ssh-…]`: compares the report in
/// DIR with the VM now, exit 6 naming each difference.
void register_report(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
