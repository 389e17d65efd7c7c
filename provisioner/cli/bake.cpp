#include "pipeline/bake.hpp"

#include "cli/commands.hpp"
#include "cli/create_setup.hpp"
#include "cli/plan_runner.hpp"
#include "cli/version.hpp"
#include "lume/types.hpp"
#include "oci/reference.hpp"
#include "pipeline/report.hpp"
#include "util/ecdsa_key.hpp"

#include <filesystem>
#include <memory>

namespace lume_unlock::cli {

namespace {

/// The arguments and flags of `bake`.
struct BakeCommandOptions {
  CreateSetup setup; ///< setup.vm empty: <recipe stem>-bake
  std::string push;
  std::uint32_t chunk_size_mb = 0;
  int push_timeout_seconds = 3 * 60 * 60;
  bool dry_run = false;
  std::string sign_key; ///< --sign-key, empty: unsigned
};

/// The build VM's default name: "<recipe file stem>-bake" ("tahoe-llm-bake").
std::string default_vm_name(const std::string& recipe) {
  return std::filesystem::path(recipe).stem().string() + "-bake";
}

nlohmann::json outcome_json(const pipeline::BakeOutcome& o) {
  nlohmann::json doc = nlohmann::json::object();
  if (o.pushed) {
    doc["reference"] = o.pushed->reference.str();
    doc["digest"] = o.pushed->digest.str();
    doc["pinned"] = o.pushed->pinned;
    doc["immutable_tag"] = o.pushed->immutable_tag;
    doc["pushed_at"] = o.pushed->pushed_at;
    doc["disk_bytes_verified"] = o.pushed->disk_bytes_verified;
  }
  if (o.signature) {
    doc["signature"] = {{"key", o.signature->key_fingerprint},
                        {"reference", o.signature->signature.str()}};
  }
  if (o.baked) {
    doc["shim_files"] = recipe::to_json(*o.baked)["shim_files"];
    doc["lock_file"] = o.lock_path;
    doc["host_record"] = o.host_record_path;
  }
  return doc;
}

void run_bake(const BakeCommandOptions& options, Context& context) {
  const std::string vm =
      lume::VmName::parse(options.setup.vm.empty() ? default_vm_name(options.setup.recipe)
                                                   : options.setup.vm)
          .value_or_throw()
          .str();
  const oci::Reference target = oci::parse_reference(options.push).value_or_throw();
  if (!target.tag || target.digest) {
    throw Error(ErrorCategory::usage,
                "--push '" + options.push + "'",
                "it needs a tag and no digest: Lume pushes tags, and the digest is known only "
                "after the push",
                "use REGISTRY/ORG/NAME:TAG, e.g. 127.0.0.1:5000/acme/tahoe-llm:1");
  }
  // The key is read (and decrypted) first: a wrong passphrase must not cost a whole bake.
  std::optional<util::EcdsaPrivateKey> sign_key;
  if (!options.sign_key.empty()) {
    sign_key = util::read_private_key_file(options.sign_key).value_or_throw();
  }
  CreateSetup setup = options.setup;
  setup.vm = vm;
  const auto lock = context.lock_vm(vm, "bake", options.dry_run);
  with_create_services(setup, context, [&](CreateServicesInUse& use) {
    pipeline::BakeOptions bake_options;
    bake_options.create = use.options;
    // A baked image must be complete: share: true items are copied into it, not linked.
    bake_options.create.copy_shared = true;
    bake_options.target = target;
    if (options.chunk_size_mb != 0) {
      bake_options.chunk_size_mb = options.chunk_size_mb;
    }
    bake_options.push_timeout = std::chrono::seconds(options.push_timeout_seconds);
    bake_options.sign_key = sign_key;
    bake_options.version = k_version;
    pipeline::BakePipeline bake(bake_options, use.services);
    pipeline::Plan plan = bake.plan();
    if (options.dry_run) {
      print_dry_run(context, plan, vm, "bake of '" + options.setup.recipe + "' in VM '" + vm + "'");
      return;
    }
    // Every step is idempotent, so the same bake resumes.
    const auto reports = apply_plan(
        context,
        plan,
        use.renderer.callback(),
        "lume-unlock bake " + options.setup.recipe + " --push " + options.push + " --name " + vm +
            resume_flag("--sign-key", options.sign_key) + resume_flags(options.setup),
        [&] { return bake.create().session() ? bake.create().session()->command_count() : 0; });
    // The baked VM's report travels with the lock file. The image is pushed and locked by now,
    // so a report that cannot be written is a warning, not a failed bake.
    pipeline::ReportOptions report_options;
    report_options.vm = vm;
    report_options.state_dir = context.global.state_dir;
    report_options.tool_version = k_version;
    const std::string report_dir = pipeline::report_dir_for_recipe(options.setup.recipe);
    auto report = pipeline::write_vm_report(report_options, context.lume(), report_dir);
    if (!report.ok()) {
      context.warn("the report of VM '" + vm + "' was not written: " + report.error().message() +
                   "; write it with 'lume-unlock report " + vm + " --out " + report_dir + "'");
    }
    if (context.json()) {
      nlohmann::json doc = with_reports(outcome_json(bake.outcome()), reports);
      doc["vm"] = vm;
      if (report.ok()) {
        doc["report"] = report_dir;
      }
      context.print_json(doc);
    } else {
      const pipeline::BakeOutcome& o = bake.outcome();
      context.out << pipeline::reports_to_text("bake '" + vm + "'", reports);
      context.out << "recorded in " << o.lock_path << " and " << o.host_record_path << "\n";
      if (report.ok()) {
        context.out << "report in " << report_dir << "/ (report.md, report.json, speedup.svg)\n";
      }
      context.out << o.pushed->pinned << "\n";
    }
  });
}

} // namespace

void register_bake(CLI::App& app, Context& context) {
  auto options = std::make_shared<BakeCommandOptions>();
  auto* command =
      app.add_subcommand("bake", "Build a VM from a recipe and push it as a digest-pinned image");
  command->footer(
      "Runs every create step in the build VM (default <recipe stem>-bake), stops it, pushes it\n"
      "through Lume, then resolves the pushed tag to its manifest digest, checks that manifest\n"
      "against the VM's own disk and NVRAM (so a tag moved by someone else is never recorded),\n"
      "adds the immutable tag sha256-<hex> and records {reference, digest, pushed_at,\n"
      "recipe_sha256, shim files} in <recipe>.lock.json and <state>/vms/<vm>/bake.json.\n"
      "With --bench the recipe's bench runs after the create steps (a failed gate pushes\n"
      "nothing) and its figures become the pushed manifest's dev.lume-unlock.bench.*\n"
      "annotations: the annotated manifest (a new digest) gets the tags, the signature and\n"
      "the record.\n"
      "Lume reports push failures only in its log: bake reads it (GET /lume/logs) while it\n"
      "waits and stops at Lume's failure line; without the log (Lume not run as its\n"
      "LaunchAgent) a failed push is noticed when --push-timeout passes. Pull the result with\n"
      "  lume-unlock pull REGISTRY/ORG/NAME@sha256:… VM --verify");
  command->add_option("recipe", options->setup.recipe, "Image recipe (YAML)")->required();
  command->add_option("--push", options->push, "Where to push: REGISTRY/ORG/NAME:TAG")->required();
  command->add_option("--name", options->setup.vm, "The build VM (default <recipe stem>-bake)");
  command->add_option("--chunk-size-mb", options->chunk_size_mb, "Lume's disk chunk size (512)");
  command
      ->add_option("--push-timeout",
                   options->push_timeout_seconds,
                   "Seconds to wait for the pushed image to appear in the registry")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--sign-key",
                   options->sign_key,
                   "Sign the pushed digest with this key (cosign layout; passphrase from "
                   "LUME_UNLOCK_KEY_PASSPHRASE); the key is recorded with the bake")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  command->add_flag("--dry-run", options->dry_run, "Print the plan; change nothing");
  add_create_setup_options(*command, options->setup);
  command->callback([options, &context] { run_bake(*options, context); });
}

} // namespace lume_unlock::cli
