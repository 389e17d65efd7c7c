#include "pipeline/pull.hpp"

#include "cli/commands.hpp"
#include "cli/plan_runner.hpp"
#include "cli/progress_renderer.hpp"
#include "lume/types.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "recipe/recipe.hpp"
#include "signing/signing.hpp"

#include <chrono>
#include <memory>

namespace lume_unlock::cli {

namespace {

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

/// The --dry-run's keys beside the plan: what was resolved and found.
nlohmann::json observed_json(const PullCommandOptions& options,
                             const transfer::ImagePullPlan& seen) {
  nlohmann::json doc = {{"reference", options.reference},
                        {"pull", seen.reference},
                        {"digest", seen.digest.str()},
                        {"vm_exists", seen.vm_exists}};
  if (seen.vm_manifest_digest) {
    doc["vm_manifest_digest"] = *seen.vm_manifest_digest;
  }
  if (seen.conflict) {
    doc["conflict"] = seen.conflict->why();
  }
  if (seen.signature) {
    doc["signature"] = signing::to_json(*seen.signature);
  }
  return doc;
}

/// The --verify check into `doc` (and, without --json, as text). Returns the exit code (0
/// verified, 6 differences).
int render_verification(Context& context,
                        const pipeline::BakedGuestCheck& check,
                        nlohmann::json& doc) {
  const auto drifted = check.report.drifted();
  doc["verify"] = pipeline::to_json(check.report);
  doc["verify"]["verified"] = check.verified();
  if (check.record.image && check.record.image->reference) {
    doc["verify"]["baked_from"] = *check.record.image->reference;
  }
  if (!context.json()) {
    if (check.verified()) {
      context.out << "verified: " << check.report.items.size()
                  << " items of the baked record match the guest\n";
    } else {
      context.out << "not verified: " << drifted.size() << " of " << check.report.items.size()
                  << " items differ from the baked record\n";
      for (const auto& item : drifted) {
        context.out << "  " << item.item << ": expected " << item.expected << ", found "
                    << item.found << "\n";
      }
    }
  }
  return check.verified() ? 0 : exit_code(ErrorCategory::verification);
}

int run_pull(const PullCommandOptions& options, Context& context) {
  pipeline::PullOptions pull;
  pull.vm = lume::VmName::parse(options.vm).value_or_throw();
  const auto lock = context.lock_vm(options.vm, "pull", options.dry_run);
  pull.reference = oci::parse_reference(options.reference).value_or_throw();
  pull.lume_url = context.global.lume_url;
  pull.state_dir = context.global.state_dir;
  pull.verify = options.verify;
  pull.boot_timeout = std::chrono::seconds(options.boot_timeout_seconds);
  pull.ssh_wait = std::chrono::seconds(options.ssh_wait_seconds);
  std::optional<recipe::Recipe> loaded;
  if (!options.recipe.empty()) {
    loaded = recipe::load_recipe(options.recipe).value_or_throw();
    pull.trusted_keys = recipe::load_trusted_keys(*loaded).value_or_throw();
  }
  oci::RegistryClient registry(
      registry_client_options(options.registry, loaded ? &*loaded : nullptr));
  ProgressRenderer renderer(context);
  pipeline::PullPipeline pipeline(pull,
                                  {context.lume(),
                                   registry,
                                   [&]() -> std::unique_ptr<guest::GuestSession> {
                                     return context.open_guest(options.vm, options.connection);
                                   },
                                   renderer.callback()});
  pipeline::Plan plan = pipeline.plan(options.dry_run);
  if (options.dry_run) {
    print_dry_run(context,
                  plan,
                  options.vm,
                  "pull of '" + options.reference + "' into VM '" + options.vm + "'",
                  observed_json(options, *pipeline.outcome().observed));
    return 0;
  }
  apply_plan(context,
             plan,
             renderer.callback(),
             "lume-unlock pull " + options.reference + " " + options.vm +
                 resume_flag("--recipe", options.recipe) + (options.verify ? " --verify" : ""),
             [&] { return pipeline.ssh_commands(); });
  const transfer::PulledImage& image = *pipeline.outcome().image;
  nlohmann::json doc = {{"vm", options.vm},
                        {"reference", image.reference},
                        {"digest", image.digest.str()},
                        {"lume_manifest_digest", image.lume_manifest_digest},
                        {"changed", image.changed},
                        {"provenance", pipeline.outcome().record_path}};
  if (image.signature) {
    doc["signature"] = signing::to_json(*image.signature);
    context.note(pipeline::verified_line(image.digest, *image.signature));
  }
  if (!context.json()) {
    context.note(image.changed ? "pulled " + image.reference + " into VM '" + options.vm + "'"
                               : "VM '" + options.vm + "' already holds " + image.digest.str() +
                                     ": nothing to do");
    context.out << image.digest.str() << '\n';
  }
  const int code =
      options.verify ? render_verification(context, *pipeline.outcome().check, doc) : 0;
  if (context.json()) {
    context.print_json(doc);
  }
  return code;
}

} // namespace

void register_pull(CLI::App& app, Context& context) {
  auto options = std::make_shared<PullCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "pull", "Pull an image into a Lume VM, pinned to a verified digest, and record provenance");
  command->footer(
      "REF is [registry/]organization/name[:tag] or …@sha256:<hex>. Lume pulls only by tag, so a "
      "tag is resolved first and Lume's .manifest-digest must match it afterwards (a tag moved "
      "meanwhile fails with exit 4 and leaves the VM for inspection); a digest is pulled "
      "through its immutable tag sha256-<hex>. Where the VM lives is asked of Lume (its "
      "storage locations), and the registry must serve https, as Lume requires.\nExample: "
      "lume-unlock pull "
      "ghcr.io/trycua/macos-tahoe-cua:latest demo");
  command->add_option("REF", options->reference, "image reference")->required();
  command->add_option("NAME", options->vm, "local VM name ([A-Za-z0-9._-])")->required();
  command
      ->add_option("--recipe",
                   options->recipe,
                   "Recipe whose trust: keys must have signed REF's digest (exit 6 otherwise, "
                   "before Lume pulls anything)")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  command->add_flag(
      "--dry-run", options->dry_run, "resolve and show what would happen; change nothing");
  command->add_flag("--verify",
                    options->verify,
                    "boot the VM and check its shim files and agents against the record baked "
                    "into it (exit 6 on a difference)");
  command
      ->add_option("--boot-timeout",
                   options->boot_timeout_seconds,
                   "with --verify: seconds to wait for the VM to boot with SSH open")
      ->capture_default_str();
  command
      ->add_option("--ssh-wait",
                   options->ssh_wait_seconds,
                   "with --verify: seconds to retry the first SSH login")
      ->capture_default_str();
  add_registry_flags(*command, options->registry);
  add_connection_options(*command, options->connection);
  command->callback([options, &context] { context.exit_status = run_pull(*options, context); });
}

} // namespace lume_unlock::cli
