#pragma once

#include "cli/context.hpp"
#include "cli/registry_options.hpp"
#include "guest/ssh_session.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace lume_unlock::cli {

/// The arguments and flags of `pull`.
struct PullCommandOptions {
  std::string reference;
  std::string vm;
  std::string recipe; ///< --recipe: only its trust: and registry: blocks are used
  bool dry_run = false;
  bool verify = false;
  int boot_timeout_seconds = 600;
  int ssh_wait_seconds = 60;
  RegistryFlags registry;
  guest::ConnectionOptions connection;
};

/// `lume-unlock pull REF NAME [--dry-run] [--insecure-registry HOST]…`: resolve REF to a verified
/// digest, have Lume pull it into VM NAME, check Lume's .manifest-digest against it, and record
/// the provenance at <state>/vms/NAME/provenance.json (DESIGN §7, §8 step 2).
void register_pull(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
