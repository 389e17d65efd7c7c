#include "cli/create.hpp"

#include "cli/create_report.hpp"
#include "cli/create_setup.hpp"
#include "pipeline/create.hpp"
#include "recipe/recipe.hpp"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lume_unlock::cli {

namespace {

struct CreateCommandOptions {
  CreateSetup setup;
  std::uint32_t cpu = 0;
  std::string memory;
  bool dry_run = false;
  bool exclusive = false;
  int install_settle_seconds = 90;
};

void run_planned_create(const CreateCommandOptions& options,
                        Context& context,
                        int& exit_code,
                        pipeline::CreatePipeline& pipeline,
                        pipeline::Plan& plan,
                        CreateServicesInUse& use) {
  const BundleLocation& choice = use.bundle_location;
  const LocatedBundle& located = use.bundle;
  lume::LumeClient& lume_client = use.lume;
  ProgressRenderer& renderer = use.renderer;
  if (options.dry_run) {
    if (context.json()) {
      nlohmann::json doc = plan.to_json();
      doc["vm"] = options.setup.vm;
      doc["dry_run"] = true;
      doc["bundle_source"] = choice.source;
      context.print_json(doc);
    } else {
      context.out << "create '" << options.setup.vm
                  << "' would run (dry run, nothing changed; bundle "
                  << "from " << choice.source << "):\n"
                  << plan.to_text();
    }
    exit_code = 0;
    return;
  }

  std::vector<pipeline::StepReport> reports;
  const auto report_counts = [&] {
    const std::uint64_t ssh = pipeline.session() ? pipeline.session()->command_count() : 0;
    context.debug("SSH commands: " + std::to_string(ssh) +
                  ", Lume requests: " + std::to_string(lume_client.request_count()));
  };
  try {
    // The resume hint repeats what decides the plan, so copying it resumes the same create.
    std::string resume = "lume-unlock create " + options.setup.vm;
    for (const auto& [flag, value] :
         {std::pair<const char*, std::string>{"--recipe", options.setup.recipe},
          {"--from", options.setup.from},
          {"--bundle", options.setup.bundle}}) {
      if (!value.empty()) {
        resume += std::string(" ") + flag + " " + value;
      }
    }
    if (options.setup.bench) {
      resume += " --bench";
    }
    plan.apply(renderer.callback(), resume, reports);
  } catch (const Error&) {
    report_counts();
    throw;
  }
  report_counts();
  if (context.json()) {
    nlohmann::json doc = create_outcome_json(pipeline, choice.source);
    if (located.artifact && doc.contains("shim")) {
      doc["shim"]["bundle_reference"] = located.artifact->str();
    }
    doc["vm"] = options.setup.vm;
    nlohmann::json steps = pipeline::reports_to_json(reports);
    doc["steps"] = steps["steps"];
    doc["changed"] = steps["changed"];
    doc["counts"] = {{"ssh_commands", pipeline.session() ? pipeline.session()->command_count() : 0},
                     {"lume_requests", lume_client.request_count()}};
    context.print_json(doc);
  } else {
    print_create_summary(context,
                         pipeline,
                         reports,
                         options.setup.vm,
                         located.artifact ? choice.source + " " + located.artifact->str()
                                          : choice.source);
  }
  exit_code = 0;
}

void run_create(const CreateCommandOptions& options, Context& context, int& exit_code) {
  // Checked before anything is loaded or asked: a bad size is the user's to fix first.
  std::optional<std::uint64_t> memory_bytes;
  if (!options.memory.empty()) {
    memory_bytes =
        recipe::parse_vm_size(options.memory, recipe::k_max_memory_bytes).value_or_throw();
  }
  const auto lock = context.lock_vm(options.setup.vm, "create", options.dry_run);
  with_create_services(options.setup, context, [&](CreateServicesInUse& use) {
    pipeline::CreateOptions& create = use.options;
    if (options.cpu != 0) {
      create.cpu = options.cpu;
    }
    if (memory_bytes) {
      create.memory_bytes = *memory_bytes;
    }
    create.install_settle = std::chrono::seconds(options.install_settle_seconds);
    create.exclusive = options.exclusive;
    pipeline::CreatePipeline pipeline(create, use.services);
    pipeline::Plan plan = pipeline.plan();
    run_planned_create(options, context, exit_code, pipeline, plan, use);
  });
}

} // namespace

void register_create(CLI::App& app, Context& context, int& exit_code) {
  auto options = std::make_shared<CreateCommandOptions>();
  auto* command = app.add_subcommand(
      "create", "Create (or bring up to date) a VM with the Metal capability shim installed");
  command->footer(
      "Steps: preflight, image, resize, boot, connect, facts, install-shim, probe, enablement,\n"
      "provenance, and with --bench the recipe's bench (exit 6 when its gate fails; the VM\n"
      "stays, with the figures in its record). Every other step is idempotent: running create\n"
      "again changes nothing and says so, and after a failure it resumes. --dry-run prints\n"
      "the plan and changes nothing. The shim bundle comes from --bundle, else the recipe's\n"
      "shim.bundle, else\n"
      "$LUME_UNLOCK_BUNDLE, else the installed share/lume-unlock/shim-bundle/ beside bin/,\n"
      "else this build's shim-bundle/ directory; a registry bundle (made\n"
      "by 'lume-unlock bundle push') is named REF@sha256:<hex>. A recipe with a lock file\n"
      "(<recipe>.lock.json made from the same recipe bytes) is pulled by its pinned digest.");
  command->add_option("name", options->setup.vm, "The Lume VM to create")->required();
  command->add_option("--recipe", options->setup.recipe, "Image recipe (YAML)");
  command->add_option("--cpu", options->cpu, "vCPUs (overrides the recipe's)");
  command->add_option("--memory", options->memory, "Memory, e.g. 16GB (overrides the recipe's)");
  command->add_flag("--dry-run", options->dry_run, "Print the plan; change nothing");
  command->add_flag("--exclusive",
                    options->exclusive,
                    "Remove the enablement entries added with 'allow' (the plan lists them)");
  add_create_setup_options(*command, options->setup);
  command
      ->add_option("--install-settle",
                   options->install_settle_seconds,
                   "IPSW recipes: seconds the VM must stay stopped before Lume's unattended "
                   "setup counts as finished")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command->callback([options, &context, &exit_code] { run_create(*options, context, exit_code); });
}

} // namespace lume_unlock::cli
