#include "cli/doctor.hpp"

#include "cli/commands.hpp"
#include "oci/registry_client.hpp"
#include "pipeline/doctor.hpp"
#include "transfer/shim_bundle.hpp"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::cli {

namespace {

/// The bundle a create would use (--bundle, the recipe's shim.bundle, $LUME_UNLOCK_BUNDLE, the
/// installed bundle, the build tree), loaded and verified the way create does it.
Result<pipeline::DoctorBundle> load_bundle(const DoctorOptions& options,
                                           const recipe::Recipe* recipe,
                                           const std::optional<std::string>& recipe_bundle) {
  const transfer::BundleLocation location = transfer::locate_bundle(options.bundle, recipe_bundle);
  std::optional<oci::RegistryClient> registry;
  try {
    // Credentials matter only for a bundle in a registry: a broken Docker config must not turn
    // the check of a local bundle into a failure, nor stop the other checks.
    registry.emplace(transfer::location_kind(location.path) == transfer::LocationKind::reference
                         ? registry_client_options(options.registry, recipe)
                         : oci::RegistryClientOptions{});
  } catch (const Error& e) {
    return e;
  }
  LUME_UNLOCK_TRY_ASSIGN(auto located, transfer::load_located_bundle(location, *registry));
  return pipeline::DoctorBundle{location.path + " (" + location.source + ")",
                                located.bundle.manifest()};
}

void render(const std::vector<pipeline::DoctorCheck>& checks, bool failed, Context& context) {
  if (context.json()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : checks) {
      nlohmann::json item = {
          {"name", c.name}, {"status", pipeline::verdict_name(c.verdict)}, {"detail", c.detail}};
      if (!c.fix.empty()) {
        item["fix"] = c.fix;
      }
      list.push_back(item);
    }
    context.print_json({{"checks", list}, {"ok", !failed}});
    return;
  }
  for (const auto& c : checks) {
    const std::string verdict = pipeline::verdict_name(c.verdict);
    char name[20];
    std::snprintf(name, sizeof name, "%-16s", c.name.c_str());
    context.out << verdict << std::string(5 - verdict.size(), ' ') << name << c.detail << '\n';
    if (!c.fix.empty()) {
      context.out << "     " << std::string(16, ' ') << "fix: " << c.fix << '\n';
    }
  }
}

int run_doctor(const DoctorOptions& options, Context& context) {
  pipeline::DoctorOptions doctor;
  doctor.lume_url = context.global.lume_url;
  doctor.state_dir = context.global.state_dir;
  doctor.recipe = options.recipe;
  // The recipe's registry.ca, when it names one; an unreadable recipe is the recipe check's to
  // report, not a reason to stop the registry check.
  std::optional<recipe::Recipe> recipe;
  if (options.recipe) {
    if (auto loaded = recipe::load_recipe(*options.recipe); loaded.ok()) {
      recipe = std::move(loaded).value();
    }
  }
  const recipe::Recipe* recipe_in_use = recipe ? &*recipe : nullptr;
  doctor.registry_options = [&] {
    return registry_client_options(options.registry, recipe_in_use);
  };
  doctor.load_bundle = [&](const std::optional<std::string>& recipe_bundle) {
    return load_bundle(options, recipe_in_use, recipe_bundle);
  };
  const std::vector<pipeline::DoctorCheck> checks = pipeline::run_doctor(doctor);
  bool failed = false;
  for (const auto& c : checks) {
    failed = failed || c.verdict == pipeline::Verdict::fail;
  }
  render(checks, failed, context);
  return failed ? 1 : 0;
}

} // namespace

void register_doctor(CLI::App& app, Context& context) {
  auto options = std::make_shared<DoctorOptions>();
  auto* command = app.add_subcommand(
      "doctor",
      "Check this host: Lume and its version, VNC listeners, state dir, host preference, disk, "
      "registry, shim bundle");
  command->footer(
      "Each check prints ok, warn, fail or skip, and how to fix it. Exit 1 when any check fails.\n"
      "The host preference is only read, never changed.\n"
      "With --acceptance (and --recipe): preflight, create, verify, bench, report and remove\n"
      "of a throwaway VM, each as 'lume-unlock --json …', a table of the steps, and a folder\n"
      "(--out) to attach to a bug report, with passwords and tokens scrubbed. Exit 1 when a\n"
      "step fails. The guest password comes only from the environment (--ssh-password-env).");
  command->add_option(
      "--recipe",
      options->recipe,
      "Recipe whose image to resolve (default: image-recipes/tahoe-llm.yaml when present)");
  command->add_option(
      "--bundle", options->bundle, "Shim bundle directory, archive or REF@sha256:… to verify");
  add_registry_flags(*command, options->registry);
  auto* acceptance =
      command->add_flag("--acceptance",
                        options->acceptance,
                        "Run the whole path once against a throwaway VM and write a report folder");
  command->add_option("--name", options->vm, "The throwaway VM (--acceptance)")
      ->capture_default_str()
      ->needs(acceptance);
  command
      ->add_option(
          "--out",
          options->out,
          "Folder for the acceptance run (default ./lume-unlock-acceptance-YYYYMMDD-HHMMSS)")
      ->needs(acceptance);
  command->add_flag("--keep", options->keep, "Keep the VM after the acceptance run")
      ->needs(acceptance);
  add_connection_options(*command, options->connection);
  command->callback([options, &context] {
    context.exit_status =
        options->acceptance ? run_acceptance(*options, context) : run_doctor(*options, context);
  });
}

} // namespace lume_unlock::cli
