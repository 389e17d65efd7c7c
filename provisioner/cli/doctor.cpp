#include "cli/doctor.hpp"

#include "cli/bundle_location.hpp"
#include "cli/connection_flags.hpp"
#include "cli/registry_options.hpp"
#include "lume/client.hpp"
#include "oci/registry_client.hpp"
#include "pipeline/acceptance.hpp"
#include "pipeline/doctor.hpp"
#include "util/executable_path.hpp"

#include <cstdio>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::cli {

namespace {

struct DoctorOptions {
  std::optional<std::string> recipe;
  std::optional<std::string> bundle;
  RegistryFlags registry;
  bool acceptance = false;
  std::string vm = pipeline::k_acceptance_vm;
  std::string out;
  bool keep = false;
  guest::ConnectionOptions connection;
};

/// The bundle a create would use (--bundle, the recipe's shim.bundle, $LUME_UNLOCK_BUNDLE, the
/// installed bundle, the build tree), loaded and verified the way create does it.
Result<pipeline::DoctorBundle> load_bundle(const DoctorOptions& options,
                                           const recipe::Recipe* recipe,
                                           const std::optional<std::string>& recipe_bundle) {
  const BundleLocation location = locate_bundle(options.bundle, recipe_bundle);
  std::optional<oci::RegistryClient> registry;
  try {
    // Credentials matter only for a bundle in a registry: a broken Docker config must not turn
    // the check of a local bundle into a failure, nor stop the other checks.
    registry.emplace(location_kind(location.path) == LocationKind::reference
                         ? registry_client_options(options.registry, recipe)
                         : oci::RegistryClientOptions{});
  } catch (const Error& e) {
    return e;
  }
  LUME_UNLOCK_TRY_ASSIGN(auto located, load_located_bundle(location, *registry));
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

/// ./lume-unlock-acceptance-YYYYMMDD-HHMMSS (UTC): a new folder for each run.
std::string default_acceptance_folder() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char name[64];
  std::strftime(name, sizeof name, "lume-unlock-acceptance-%Y%m%d-%H%M%S", &utc);
  return name;
}

/// The acceptance run's options: this executable, and the flags given here passed on to each step.
pipeline::AcceptanceOptions acceptance_options(const DoctorOptions& options, Context& context) {
  if (!options.recipe) {
    throw Error(ErrorCategory::usage,
                "doctor --acceptance",
                "it needs the recipe to create the VM from",
                "add --recipe FILE (a Homebrew install has share/lume-unlock/image-recipes/"
                "tahoe-llm.yaml)");
  }
  const auto executable = util::executable_path();
  if (!executable) {
    throw Error(ErrorCategory::failure,
                "doctor --acceptance",
                "the path of this lume-unlock executable is unknown",
                "run lume-unlock by its full path");
  }
  pipeline::AcceptanceOptions run;
  run.executable = *executable;
  run.global_args = {
      "--lume-url", context.global.lume_url, "--state-dir", context.global.state_dir};
  run.vm = options.vm;
  run.recipe = *options.recipe;
  if (options.bundle) {
    run.bundle_args = {"--bundle", *options.bundle};
  }
  for (const std::string& host : options.registry.insecure_registries) {
    run.registry_args.insert(run.registry_args.end(), {"--insecure-registry", host});
  }
  if (!options.registry.ca_file.empty()) {
    run.registry_args.insert(run.registry_args.end(), {"--registry-ca", options.registry.ca_file});
  }
  run.connection_args = {"--ssh-user",
                         options.connection.user,
                         "--ssh-port",
                         std::to_string(options.connection.port),
                         "--ssh-password-env",
                         options.connection.password_env};
  if (options.connection.accept_new_host_key) {
    run.connection_args.push_back("--ssh-accept-new-host-key");
  }
  run.out_dir = options.out.empty() ? default_acceptance_folder() : options.out;
  run.keep = options.keep;
  run.secrets = pipeline::acceptance_secrets(options.connection.password_env);
  return run;
}

/// A throwaway VM only: the remove step deletes it, so an existing VM of that name is refused.
void refuse_existing_vm(const std::string& vm, Context& context) {
  lume::ClientOptions lume_options;
  lume_options.base_url = context.global.lume_url;
  lume::LumeClient lume_client(lume_options);
  // Lume unreachable is the preflight step's to report, with its fix.
  if (auto found = lume_client.find(lume::VmRef{vm}); found.ok() && found.value()) {
    throw Error(ErrorCategory::usage,
                "doctor --acceptance",
                "VM '" + vm + "' already exists, and the acceptance run deletes the VM it uses",
                "name a new VM with --name NAME");
  }
}

void render_acceptance(const pipeline::AcceptanceReport& report, Context& context) {
  if (context.json()) {
    context.print_json(pipeline::to_json(report));
    return;
  }
  context.out << "step       result   seconds  detail\n";
  for (const auto& step : report.steps) {
    char line[64];
    std::snprintf(line,
                  sizeof line,
                  "%-10s %-8s %7.1f  ",
                  step.name.c_str(),
                  pipeline::acceptance_status_name(step.status),
                  step.seconds);
    context.out << line << step.detail << '\n';
  }
  context.out << (report.passed() ? "passed" : "FAILED") << "; VM '" << report.vm << "' "
              << pipeline::vm_outcome(report) << "; everything is in " << report.out_dir
              << " (see README.txt there)\n";
}

int run_acceptance(const DoctorOptions& options, Context& context) {
  const pipeline::AcceptanceOptions run = acceptance_options(options, context);
  refuse_existing_vm(run.vm, context);
  const pipeline::AcceptanceReport report =
      pipeline::run_acceptance(run, [&](const std::string& step) {
        context.note(step + " …");
      }).value_or_throw();
  render_acceptance(report, context);
  return report.passed() ? 0 : 1;
}

} // namespace

void register_doctor(CLI::App& app, Context& context, int& exit_code) {
  auto options = std::make_shared<DoctorOptions>();
  auto* command = app.add_subcommand(
      "doctor", "Check this host: Lume, state dir, host preference, disk, registry, shim bundle");
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
  command->callback([options, &context, &exit_code] {
    exit_code =
        options->acceptance ? run_acceptance(*options, context) : run_doctor(*options, context);
  });
}

} // namespace lume_unlock::cli
