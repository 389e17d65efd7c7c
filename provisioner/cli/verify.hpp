#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock verify NAME [--llama-log FILE] [--ssh-…]`: runs the installed probe stock and
/// with the shim in the guest, checks the answers against the profile (the same check as
/// create's probe step), optionally classifies a llama.cpp log (verdict must be `fast`);
/// exit 6 on failure.
void register_verify(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
