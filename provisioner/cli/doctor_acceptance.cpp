#include "cli/doctor.hpp"
#include "pipeline/acceptance.hpp"
#include "util/child_process.hpp"

#include <cstdio>
#include <ctime>
#include <string>

namespace lume_unlock::cli {

namespace {

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
  // Lume unreachable is the preflight step's to report, with its fix.
  if (auto found = context.lume().find(lume::VmRef{vm}); found.ok() && found.value()) {
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

} // namespace

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

} // namespace lume_unlock::cli
