#include "pipeline/create.hpp"

#include "cli/commands.hpp"
#include "cli/create_setup.hpp"
#include "cli/plan_runner.hpp"
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
                        pipeline::CreatePipeline& pipeline,
                        pipeline::Plan& plan,
                        CreateServicesInUse& use) {
  const std::string& source = use.options.bundle_source;
  const std::optional<oci::Reference>& artifact = use.options.bundle_artifact;
  if (options.dry_run) {
    print_dry_run(context,
                  plan,
                  options.setup.vm,
                  "create '" + options.setup.vm + "'",
                  {{"bundle_source", source}},
                  "; bundle from " + source);
    return;
  }
  // The resume hint repeats what decides the plan, so copying it resumes the same create.
  const auto reports =
      apply_plan(context,
                 plan,
                 use.renderer.callback(),
                 "lume-unlock create " + options.setup.vm +
                     resume_flag("--recipe", options.setup.recipe) + resume_flags(options.setup),
                 [&] { return pipeline.session() ? pipeline.session()->command_count() : 0; });
  if (!context.json()) {
    print_create_summary(context,
                         pipeline,
                         reports,
                         options.setup.vm,
                         artifact ? source + " " + artifact->str() : source);
    return;
  }
  nlohmann::json doc = with_reports(create_outcome_json(pipeline, source), reports);
  if (artifact && doc.contains("shim")) {
    doc["shim"]["bundle_reference"] = artifact->str();
  }
  doc["vm"] = options.setup.vm;
  doc["counts"] = {{"ssh_commands", pipeline.session() ? pipeline.session()->command_count() : 0},
                   {"lume_requests", context.lume().request_count()}};
  context.print_json(doc);
}

void run_create(const CreateCommandOptions& options, Context& context) {
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
    run_planned_create(options, context, pipeline, plan, use);
  });
}

} // namespace

void register_clone(CLI::App& app, Context& context) {
  auto options = std::make_shared<CreateCommandOptions>();
  auto* command = app.add_subcommand(
      "clone",
      "Make VM NEW from a stopped, verified VM SOURCE through Lume (a copy of its disk, nothing "
      "pulled), then converge NEW as create does (same as 'create NEW --from SOURCE')");
  command->footer(
      "SOURCE must be a VM lume-unlock made, stopped, whose last 'lume-unlock verify' passed\n"
      "against its current record, made from the same recipe (default: the one its record\n"
      "names) and, with a lock, the same image digest; otherwise exit 2 and nothing is made.\n"
      "NEW gets its own per-VM SSH key (SOURCE's is revoked in NEW); its SSH host key is\n"
      "SOURCE's (a copied disk), which its record notes under cloned_from.");
  command->add_option("source", options->setup.from, "The golden VM to copy")
      ->required()
      ->check([](const std::string& name) {
        const Status valid = lume::check_vm_name(name);
        return valid.ok() ? std::string() : valid.error().message();
      });
  command->add_option("name", options->setup.vm, "The VM to make")->required();
  command->add_option("--recipe",
                      options->setup.recipe,
                      "Image recipe (YAML); default: the one SOURCE's record names");
  command->add_flag("--dry-run", options->dry_run, "Print the plan; change nothing");
  add_create_setup_options(*command, options->setup);
  command->remove_option(command->get_option("--from"));
  command->callback([options, &context] { run_create(*options, context); });
}

void register_create(CLI::App& app, Context& context) {
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
  command->callback([options, &context] { run_create(*options, context); });
}

} // namespace lume_unlock::cli
