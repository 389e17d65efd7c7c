#pragma once

#include "cli/commands.hpp"
#include "cli/progress_renderer.hpp"
#include "pipeline/create.hpp"

#include <functional>
#include <string>
#include <vector>

namespace lume_unlock::cli {

/// What a command that runs the create steps (create, bake) takes from its command line.
struct CreateSetup {
  std::string vm;
  std::string recipe; ///< empty: none
  std::string from;   ///< empty: the recipe's image
  std::string bundle; ///< --bundle, empty: none
  int ssh_wait_seconds = 60;
  bool bench = false; ///< --bench: run the recipe's bench: block as the last create step
  RegistryFlags registry;
  guest::ConnectionOptions connection;
};

/// The options create and bake share: --from, --bundle, --ssh-wait, --bench, the registry
/// flags and the guest connection options (the VM name and recipe are each command's own).
void add_create_setup_options(CLI::App& command, CreateSetup& setup);

/// The shared flags of the resume command: " --from REF --bundle B --bench" (those given).
std::string resume_flags(const CreateSetup& setup);

/// The collaborators of a create, alive while the body of with_create_services runs (the
/// options name the bundle's source and, from a registry, its artifact).
struct CreateServicesInUse {
  pipeline::CreateOptions& options;
  pipeline::CreateServices& services;
  ProgressRenderer& renderer;
};

/// Loads the recipe (once: the create options carry it), locates and verifies the shim bundle
/// (--bundle, the recipe's shim.bundle, $LUME_UNLOCK_BUNDLE, the build tree), opens the Lume and
/// registry clients and the progress renderer, fills the create options from the global options
/// (and with --bench the recipe's bench, its host_json read), and runs `body` with them. Throws
/// Error (a recipe or bundle that does not load; --bench without a recipe bench: block).
void with_create_services(const CreateSetup& setup,
                          Context& context,
                          const std::function<void(CreateServicesInUse&)>& body);

// create_report.cpp
/// The outcome of a create for --json: the image, the shim files (with `bundle_source`), the
/// probe answers and changed families, the enabled programs, enablement changes and warnings
/// (sections of steps that did not run are absent).
nlohmann::json create_outcome_json(const pipeline::CreatePipeline& pipeline,
                                   const std::string& bundle_source);

/// The human summary of a create: the step reports, then the image, the shim files with their
/// SHA-256, the probe's stock and unlocked answers, and the enabled programs.
void print_create_summary(Context& context,
                          const pipeline::CreatePipeline& pipeline,
                          const std::vector<pipeline::StepReport>& reports,
                          const std::string& vm,
                          const std::string& bundle_source);

} // namespace lume_unlock::cli
