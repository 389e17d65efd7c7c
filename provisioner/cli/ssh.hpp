#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock ssh NAME [--ssh-…] -- COMMAND…`: runs one plain command in the guest (each word
/// quoted for the guest's shell) and exits with its exit status.
void register_ssh(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
