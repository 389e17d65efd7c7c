#include "cli/create.hpp"

#include "bundle/loader.hpp"
#include "cli/bundle_location.hpp"
#include "cli/progress_renderer.hpp"
#include "cli/pull.hpp"
#include "cli/registry_options.hpp"
#include "cli/vm_guest.hpp"
#include "guest/connection_options.hpp"
#include "lume/client.hpp"
#include "lume/size.hpp"
#include "pipeline/create.hpp"
#include "recipe/recipe.hpp"

#include <cstdlib>
#include <iomanip>
#include <memory>
#include <sstream>

namespace lume_unlock::cli {

namespace {

struct CreateCommandOptions {
  CreateSetup setup;
  std::uint32_t cpu = 0;
  std::string memory;
  bool dry_run = false;
  int install_settle_seconds = 90;
};

nlohmann::json probe_summary(const nlohmann::json& doc) {
  int highest = 0;
  if (doc.contains("families")) {
    for (const auto& [code, answer] : doc["families"].items()) {
      const int value = std::stoi(code);
      if (value >= 1001 && value <= 1999 && answer.is_boolean() && answer.get<bool>()) {
        highest = std::max(highest, value);
      }
    }
  }
  return {{"highest_apple_family", highest},
          {"max_threadgroup_memory", doc.value("max_threadgroup_memory", 0ULL)},
          {"shim", doc.value("/shim/state"_json_pointer, std::string("absent"))}};
}

nlohmann::json outcome_json(const pipeline::CreatePipeline& pipeline,
                            const std::string& bundle_source) {
  const pipeline::CreateOutcome& o = pipeline.outcome();
  nlohmann::json doc;
  doc["reference"] = o.reference;
  doc["locked"] = o.locked;
  if (o.image) {
    doc["image"] = {{"reference", o.image->reference},
                    {"digest", o.image->digest.str()},
                    {"lume_manifest_digest", o.image->lume_manifest_digest},
                    {"changed", o.image->changed}};
  }
  if (o.shim) {
    const auto& s = o.shim->installed;
    nlohmann::json files = nlohmann::json::array();
    files.push_back({{"path", s.shim.path}, {"sha256", s.shim.sha256}});
    for (const auto& f : s.support) {
      files.push_back({{"path", f.path}, {"sha256", f.sha256}});
    }
    if (s.probe) {
      files.push_back({{"path", s.probe->path}, {"sha256", s.probe->sha256}});
    }
    doc["shim"] = {{"platform", s.platform},
                   {"bundle_version", s.bundle_version},
                   {"bundle_source", bundle_source},
                   {"changed", o.shim->changed},
                   {"files", files}};
  }
  if (o.probe && o.verdict) {
    doc["probe"] = {{"stock", o.probe->stock},
                    {"unlocked", o.probe->unlocked},
                    {"changed_families", o.verdict->changed_families},
                    {"problems", o.verdict->problems}};
  }
  nlohmann::json enabled = nlohmann::json::array();
  for (const auto& entry : pipeline.recipe().enablement.entries) {
    enabled.push_back({{"name", entry.name}, {"program", entry.program}, {"agent", entry.agent}});
  }
  doc["enablement"] = enabled;
  doc["enablement_changes"] = o.enablement_changes;
  doc["warnings"] = o.warnings;
  return doc;
}

void print_summary(Context& context,
                   const pipeline::CreatePipeline& pipeline,
                   const std::vector<pipeline::StepReport>& reports,
                   const std::string& vm,
                   const std::string& bundle_source) {
  const pipeline::CreateOutcome& o = pipeline.outcome();
  std::ostream& out = context.out;
  out << pipeline::reports_to_text("create '" + vm + "'", reports);
  if (o.image) {
    out << "image: " << o.image->reference << " " << o.image->digest.str() << "\n";
  }
  if (o.shim) {
    const auto& s = o.shim->installed;
    out << "shim " << s.bundle_version << " (" << s.platform << ", bundle from " << bundle_source
        << "):\n";
    out << "  " << s.shim.sha256 << "  " << s.shim.path << "\n";
    for (const auto& f : s.support) {
      out << "  " << f.sha256 << "  " << f.path << "\n";
    }
    if (s.probe) {
      out << "  " << s.probe->sha256 << "  " << s.probe->path << "\n";
    }
  }
  if (o.probe && o.verdict) {
    const auto stock = probe_summary(o.probe->stock);
    const auto unlocked = probe_summary(o.probe->unlocked);
    out << "probe: stock Apple " << stock["highest_apple_family"] << ", threadgroup memory "
        << stock["max_threadgroup_memory"] << "; unlocked Apple "
        << unlocked["highest_apple_family"] << ", threadgroup memory "
        << unlocked["max_threadgroup_memory"] << "; changed families:";
    for (const auto& code : o.verdict->changed_families) {
      out << " " << code;
    }
    out << "\n";
  }
  out << "enabled:";
  if (pipeline.recipe().enablement.entries.empty()) {
    out << " (none)";
  }
  for (const auto& entry : pipeline.recipe().enablement.entries) {
    out << " " << entry.name << (entry.agent ? " (agent)" : "");
  }
  out << "\n";
}

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
    plan.apply(renderer.callback(), resume, reports);
  } catch (const Error&) {
    report_counts();
    throw;
  }
  report_counts();
  if (context.json()) {
    nlohmann::json doc = outcome_json(pipeline, choice.source);
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
    print_summary(context,
                  pipeline,
                  reports,
                  options.setup.vm,
                  located.artifact ? choice.source + " " + located.artifact->str() : choice.source);
  }
  exit_code = 0;
}

void run_create(const CreateCommandOptions& options, Context& context, int& exit_code) {
  with_create_services(options.setup, context, [&](CreateServicesInUse& use) {
    pipeline::CreateOptions& create = use.options;
    if (options.cpu != 0) {
      create.cpu = options.cpu;
    }
    if (!options.memory.empty()) {
      create.memory_bytes = lume::parse_size(options.memory).value_or_throw();
    }
    create.install_settle = std::chrono::seconds(options.install_settle_seconds);
    pipeline::CreatePipeline pipeline(create, use.services);
    pipeline::Plan plan = pipeline.plan();
    run_planned_create(options, context, exit_code, pipeline, plan, use);
  });
}

/// $LUME_UNLOCK_TEST_PROBE_ENV ("K=V[,K=V]…"): extra environment for the unlocked probe run,
/// for tests that need a shim that stays inert. Not a user feature.
std::map<std::string, std::string> test_probe_env() {
  std::map<std::string, std::string> env;
  const char* value = std::getenv("LUME_UNLOCK_TEST_PROBE_ENV");
  std::stringstream list(value != nullptr ? value : "");
  std::string item;
  while (std::getline(list, item, ',')) {
    const auto eq = item.find('=');
    if (eq != std::string::npos && eq > 0) {
      env[item.substr(0, eq)] = item.substr(eq + 1);
    }
  }
  return env;
}

} // namespace

void add_create_setup_options(CLI::App& command, CreateSetup& setup) {
  command.add_option("--from", setup.from, "Image reference (overrides the recipe's)");
  command.add_option(
      "--bundle", setup.bundle, "Shim bundle directory, archive, or REF@sha256:… in a registry");
  command
      .add_option("--ssh-wait",
                  setup.ssh_wait_seconds,
                  "Seconds to retry the first SSH login after Lume reports SSH open")
      ->capture_default_str();
  add_registry_flags(command, setup.registry);
  guest::add_connection_options(command, setup.connection);
}

void with_create_services(const CreateSetup& setup,
                          Context& context,
                          const std::function<void(CreateServicesInUse&)>& body) {
  std::optional<recipe::Recipe> recipe_for_bundle;
  if (!setup.recipe.empty()) {
    recipe_for_bundle = recipe::load_recipe(setup.recipe).value_or_throw();
  }
  const BundleLocation choice =
      locate_bundle(setup.bundle.empty() ? std::nullopt : std::optional<std::string>(setup.bundle),
                    recipe_for_bundle ? recipe_for_bundle->shim.bundle : std::nullopt);
  oci::RegistryClient registry(registry_client_options(setup.registry));
  const LocatedBundle located = load_located_bundle(choice, registry).value_or_throw();
  const bundle::LoadedBundle& bundle = located.bundle;
  context.debug("shim bundle " + bundle.manifest().version + " from " + choice.source + ": " +
                choice.path);

  lume::ClientOptions lume_options;
  lume_options.base_url = context.global.lume_url;
  lume::LumeClient lume_client(lume_options);
  ProgressRenderer renderer(context);

  pipeline::CreateOptions create;
  create.vm = setup.vm;
  if (!setup.recipe.empty()) {
    create.recipe_path = setup.recipe;
  }
  if (!setup.from.empty()) {
    create.from = setup.from;
  }
  create.lume_url = context.global.lume_url;
  create.lume_home = lume_home_directory();
  create.state_dir = context.global.state_dir;
  create.bundle_source = choice.source;
  create.bundle_artifact = located.artifact;
  create.probe_extra_env = test_probe_env();
  create.ssh_wait = std::chrono::seconds(setup.ssh_wait_seconds);

  pipeline::CreateServices services{lume_client,
                                    registry,
                                    bundle,
                                    [&]() -> std::unique_ptr<guest::GuestSession> {
                                      return connect_vm_guest(
                                          context, setup.vm, setup.connection, lume_client);
                                    },
                                    renderer.callback(),
                                    [&](const std::string& warning) { context.warn(warning); }};
  CreateServicesInUse use{create, services, choice, located, lume_client, registry, renderer};
  body(use);
}

void register_create(CLI::App& app, Context& context, int& exit_code) {
  auto options = std::make_shared<CreateCommandOptions>();
  auto* command = app.add_subcommand(
      "create", "Create (or bring up to date) a VM with the Metal capability shim installed");
  command->footer(
      "Steps: preflight, image, resize, boot, connect, facts, install-shim, probe, enablement,\n"
      "provenance. Every step is idempotent: running create again changes nothing and says so,\n"
      "and after a failure it resumes. --dry-run prints the plan and changes nothing.\n"
      "The shim bundle comes from --bundle, else the recipe's shim.bundle, else\n"
      "$LUME_UNLOCK_BUNDLE, else this build's shim-bundle/ directory; a registry bundle (made\n"
      "by 'lume-unlock bundle push') is named REF@sha256:<hex>. A recipe with a lock file\n"
      "(<recipe>.lock.json made from the same recipe bytes) is pulled by its pinned digest.");
  command->add_option("name", options->setup.vm, "The Lume VM to create")->required();
  command->add_option("--recipe", options->setup.recipe, "Image recipe (YAML)");
  command->add_option("--cpu", options->cpu, "vCPUs (overrides the recipe's)");
  command->add_option("--memory", options->memory, "Memory, e.g. 16GB (overrides the recipe's)");
  command->add_flag("--dry-run", options->dry_run, "Print the plan; change nothing");
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
