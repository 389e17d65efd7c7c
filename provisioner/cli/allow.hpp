#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock allow list NAME [--json]`, `allow add NAME ENTRY --program PATH [--arg A]…
/// [--env K=V]… [--no-agent] [--no-keep-alive]` and `allow remove NAME ENTRY`: show or edit the
/// enablement list in the guest and re-apply it (DESIGN §6).
void register_allow(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
