#include "cli/pull.hpp"

#include "cli/connection_flags.hpp"
#include "cli/progress_renderer.hpp"
#include "cli/pull_render.hpp"
#include "cli/registry_options.hpp"
#include "cli/vm_guest.hpp"
#include "lume/client.hpp"
#include "lume/types.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "pipeline/pull.hpp"
#include "recipe/recipe.hpp"
#include "recipe/trust.hpp"
#include "signing/signature_verifier.hpp"

#include <chrono>
#include <memory>

namespace lume_unlock::cli {

namespace {

int run_pull(const PullCommandOptions& options, Context& context) {
  pipeline::PullOptions pull;
  pull.vm = lume::VmName::parse(options.vm).value_or_throw();
  const auto lock = context.lock_vm(options.vm, "pull", options.dry_run);
  pull.reference = oci::parse_reference(options.reference).value_or_throw();
  pull.lume_url = context.global.lume_url;
  pull.state_dir = context.global.state_dir;
  pull.boot_timeout = std::chrono::seconds(options.boot_timeout_seconds);
  pull.ssh_wait = std::chrono::seconds(options.ssh_wait_seconds);
  std::optional<recipe::Recipe> loaded;
  if (!options.recipe.empty()) {
    loaded = recipe::load_recipe(options.recipe).value_or_throw();
    pull.trusted_keys = recipe::load_trusted_keys(*loaded).value_or_throw();
  }
  oci::RegistryClient registry(
      registry_client_options(options.registry, loaded ? &*loaded : nullptr));
  lume::ClientOptions lume_options;
  lume_options.base_url = context.global.lume_url;
  lume::LumeClient lume(lume_options);
  ProgressRenderer renderer(context);
  pipeline::PullServices services{lume,
                                  registry,
                                  [&]() -> std::unique_ptr<guest::GuestSession> {
                                    return connect_vm_guest(
                                        context, options.vm, options.connection, lume);
                                  },
                                  renderer.callback(),
                                  [&](const std::string& line) { context.debug(line); }};

  if (options.dry_run) {
    render_dry_run(options, context, pipeline::plan_pull(pull, services));
    return 0;
  }
  const pipeline::PullOutcome pulled = pipeline::pull_vm(pull, services);
  const transfer::PulledImage& image = pulled.image;
  nlohmann::json doc = {{"vm", options.vm},
                        {"reference", image.reference},
                        {"digest", image.digest.str()},
                        {"lume_manifest_digest", image.lume_manifest_digest},
                        {"changed", image.changed},
                        {"provenance", pulled.record_path}};
  if (image.signature) {
    doc["signature"] = signing::to_json(*image.signature);
    context.note(verified_line(image.digest, *image.signature));
  }
  if (!context.json()) {
    context.note(image.changed ? "pulled " + image.reference + " into VM '" + options.vm + "'"
                               : "VM '" + options.vm + "' already holds " + image.digest.str() +
                                     ": nothing to do");
    context.out << image.digest.str() << '\n';
  }
  int code = 0;
  if (options.verify) {
    code = render_verification(
        context, pipeline::verify_pulled_vm(pull, services, pulled.pulled), doc);
  }
  if (context.json()) {
    context.print_json(doc);
  }
  return code;
}

} // namespace

void register_pull(CLI::App& app, Context& context, int& exit_code) {
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
  command->callback([options, &context, &exit_code] { exit_code = run_pull(*options, context); });
}

} // namespace lume_unlock::cli
