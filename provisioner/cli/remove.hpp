#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock remove NAME [--delete-vm] [--dry-run] [--ssh-…]`: leaves the guest stock (agents
/// booted out and deleted, guard file, enablement.json, shim, probe and guest record deleted),
/// keeps the host record as removed-<time>.json, and with --delete-vm deletes the VM.
void register_remove(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
