#pragma once

#include "cli/bundle_location.hpp"
#include "cli/context.hpp"
#include "cli/progress_renderer.hpp"
#include "cli/registry_options.hpp"
#include "guest/connection_options.hpp"
#include "lume/client.hpp"
#include "oci/registry_client.hpp"
#include "pipeline/create.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace lume_unlock::cli {

/// `lume-unlock create NAME [--recipe FILE] [--from REF] [--cpu N] [--memory SIZE]
/// [--bundle DIR|ARCHIVE] [--dry-run] [--insecure-registry HOST]… [--ssh-…]`: the create plan
/// of DESIGN §8 (preflight, image, resize, boot, connect, facts, install-shim, probe,
/// enablement, provenance), printed with --dry-run, applied otherwise, then a summary.
void register_create(CLI::App& app, Context& context, int& exit_code);

/// What a command that runs the create steps (create, bake) takes from its command line.
struct CreateSetup {
  std::string vm;
  std::string recipe; ///< empty: none
  std::string from;   ///< empty: the recipe's image
  std::string bundle; ///< --bundle, empty: none
  int ssh_wait_seconds = 60;
  RegistryFlags registry;
  guest::ConnectionOptions connection;
};

/// The options create and bake share: --from, --bundle, --ssh-wait, the registry flags and the
/// guest connection options (the VM name and recipe are each command's own).
void add_create_setup_options(CLI::App& command, CreateSetup& setup);

/// The collaborators of a create, alive while the body of with_create_services runs.
struct CreateServicesInUse {
  pipeline::CreateOptions& options;
  pipeline::CreateServices& services;
  const BundleLocation& bundle_location;
  const LocatedBundle& bundle; ///< loaded and verified; `artifact` when it came from a registry
  lume::LumeClient& lume;
  oci::RegistryClient& registry;
  ProgressRenderer& renderer;
};

/// Locates and verifies the shim bundle (--bundle, the recipe's shim.bundle,
/// $LUME_UNLOCK_BUNDLE, the build tree), opens the Lume and registry clients and the progress
/// renderer, fills the create options from the global options, and runs `body` with them.
void with_create_services(const CreateSetup& setup,
                          Context& context,
                          const std::function<void(CreateServicesInUse&)>& body);

} // namespace lume_unlock::cli
