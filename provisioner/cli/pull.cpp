#include "cli/pull.hpp"

#include "cli/progress_renderer.hpp"
#include "cli/registry_options.hpp"
#include "cli/vm_guest.hpp"
#include "guest/connection_options.hpp"
#include "lume/client.hpp"
#include "lume/vm_name.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "pipeline/baked_guest_check.hpp"
#include "pipeline/image_pull.hpp"
#include "pipeline/vm_boot.hpp"
#include "provenance/provenance.hpp"

#include <cstdlib>
#include <memory>

namespace lume_unlock::cli {

namespace {

struct PullOptions {
  std::string reference;
  std::string vm;
  bool dry_run = false;
  bool verify = false;
  int boot_timeout_seconds = 600;
  int ssh_wait_seconds = 60;
  RegistryFlags registry;
  guest::ConnectionOptions connection;
};

/// --verify: boots the pulled VM and checks its guest against the record the bake left in it;
/// a verified guest's record becomes this VM's (guest and host). Returns the exit code (0
/// verified, 6 differences).
int verify_pulled_guest(const PullOptions& options,
                        Context& context,
                        lume::LumeClient& lume,
                        const util::ProgressCallback& progress,
                        const provenance::Provenance& pulled,
                        nlohmann::json& doc) {
  const pipeline::StepResult booted = pipeline::boot_vm(
      lume, options.vm, std::chrono::seconds(options.boot_timeout_seconds), progress);
  context.debug("boot: " + booted.summary);
  auto session = pipeline::connect_when_ready(
      [&]() -> std::unique_ptr<guest::GuestSession> {
        return connect_vm_guest(context, options.vm, options.connection, lume);
      },
      std::chrono::seconds(options.ssh_wait_seconds));
  const pipeline::BakedGuestCheck check = pipeline::check_baked_guest(*session).value_or_throw();
  const auto drifted = check.report.drifted();
  doc["verify"] = pipeline::to_json(check.report);
  doc["verify"]["verified"] = check.verified();
  if (check.record.image && check.record.image->reference) {
    doc["verify"]["baked_from"] = *check.record.image->reference;
  }
  if (check.verified()) {
    pipeline::adopt_baked_record(
        *session, check, pulled, context.global.state_dir, provenance::rfc3339_now())
        .value_or_throw();
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

/// The provenance record after a pull: image, VM, Lume URL and hardware replaced, every other
/// section of an existing record kept; nullopt when nothing but the times would change.
std::optional<provenance::Provenance> updated_record(const std::string& state_dir,
                                                     const provenance::Provenance& fresh) {
  auto existing = provenance::read_provenance(state_dir, fresh.vm);
  provenance::Provenance record = existing.ok() ? existing.value() : provenance::Provenance{};
  const nlohmann::json before = existing.ok() ? provenance::to_json(record) : nlohmann::json();
  record.vm = fresh.vm;
  record.lume_url = fresh.lume_url;
  record.image = fresh.image;
  record.hardware = fresh.hardware;
  if (existing.ok() && provenance::to_json(record) == before) {
    return std::nullopt;
  }
  const std::string now = provenance::rfc3339_now();
  if (!record.created_at) {
    record.created_at = now;
  }
  record.updated_at = now;
  return record;
}

provenance::HardwareInfo hardware_of(const lume::VmDetails& details) {
  // Lume reports 0 for a key its config.json lacks: unknown, so absent rather than invented.
  provenance::HardwareInfo hw;
  if (details.cpu_count > 0) {
    hw.cpu = static_cast<std::int64_t>(details.cpu_count);
  }
  if (details.memory_size > 0) {
    hw.memory_bytes = details.memory_size;
  }
  if (details.disk_size.total > 0) {
    hw.disk_bytes = details.disk_size.total;
  }
  return hw;
}

void run_dry(const PullOptions& options,
             Context& context,
             lume::LumeApi& lume,
             oci::RegistryClient& registry,
             const pipeline::ImagePullRequest& request) {
  pipeline::ImagePullPlan plan =
      pipeline::plan_image_pull(lume, registry, request).value_or_throw();
  const char* action = plan.in_place ? "none" : plan.conflict ? "refuse" : "pull";
  if (context.json()) {
    nlohmann::json doc = {{"dry_run", true},
                          {"reference", options.reference},
                          {"pull", plan.reference},
                          {"digest", plan.digest.str()},
                          {"vm", options.vm},
                          {"vm_exists", plan.vm_exists},
                          {"action", action}};
    if (plan.vm_manifest_digest) {
      doc["vm_manifest_digest"] = *plan.vm_manifest_digest;
    }
    if (plan.conflict) {
      doc["conflict"] = plan.conflict->why();
    }
    context.print_json(doc);
    return;
  }
  context.out << "resolved " << options.reference << " to " << plan.digest.str() << '\n';
  if (plan.in_place) {
    context.out << "VM '" << options.vm << "' exists and already holds " << plan.digest.str()
                << ": nothing to do\n";
  } else if (plan.conflict) {
    context.out << "would refuse: " << plan.conflict->why() << '\n';
  } else {
    context.out << "VM '" << options.vm << "' does not exist: would ask Lume to pull "
                << plan.reference << " into it and check its .manifest-digest\n";
  }
}

int run_pull(const PullOptions& options, Context& context) {
  lume::check_vm_name(options.vm).value_or_throw();
  oci::Reference ref = oci::parse_reference(options.reference).value_or_throw();
  oci::RegistryClient registry(registry_client_options(options.registry));
  lume::ClientOptions lume_options;
  lume_options.base_url = context.global.lume_url;
  lume::LumeClient lume(lume_options);

  ProgressRenderer renderer(context);
  pipeline::ImagePullRequest request{
      ref, options.vm, lume_home_directory(), std::chrono::hours(6), renderer.callback()};
  context.debug("Lume's VM directories: " + request.lume_home);
  if (options.dry_run) {
    run_dry(options, context, lume, registry, request);
    return 0;
  }
  pipeline::PulledImage pulled = pipeline::pull_image(lume, registry, request).value_or_throw();

  provenance::Provenance fresh;
  fresh.vm = options.vm;
  fresh.lume_url = context.global.lume_url;
  fresh.image =
      provenance::ImageInfo{pulled.reference, pulled.digest.str(), pulled.lume_manifest_digest};
  auto state = lume.get(options.vm).value_or_throw();
  if (const auto* details = std::get_if<lume::VmDetails>(&state)) {
    fresh.hardware = hardware_of(*details);
  }
  auto record = updated_record(context.global.state_dir, fresh);
  if (record) {
    provenance::write_provenance(context.global.state_dir, *record).value_or_throw();
  }
  const std::string path =
      provenance::provenance_path(context.global.state_dir, options.vm).value_or_throw();
  nlohmann::json doc = {{"vm", options.vm},
                        {"reference", pulled.reference},
                        {"digest", pulled.digest.str()},
                        {"lume_manifest_digest", pulled.lume_manifest_digest},
                        {"changed", pulled.changed},
                        {"provenance", path}};
  if (!context.json()) {
    context.note(pulled.changed ? "pulled " + pulled.reference + " into VM '" + options.vm + "'"
                                : "VM '" + options.vm + "' already holds " + pulled.digest.str() +
                                      ": nothing to do");
    context.out << pulled.digest.str() << '\n';
  }
  int code = 0;
  if (options.verify) {
    code = verify_pulled_guest(options, context, lume, renderer.callback(), fresh, doc);
  }
  if (context.json()) {
    context.print_json(doc);
  }
  return code;
}

} // namespace

std::string lume_home_directory() {
  if (const char* home = std::getenv("LUME_HOME"); home != nullptr && *home != '\0') {
    return home;
  }
  const char* user_home = std::getenv("HOME");
  return std::string(user_home != nullptr ? user_home : "") + "/.lume";
}

void register_pull(CLI::App& app, Context& context, int& exit_code) {
  auto options = std::make_shared<PullOptions>();
  CLI::App* command = app.add_subcommand(
      "pull", "Pull an image into a Lume VM, pinned to a verified digest, and record provenance");
  command->footer(
      "REF is [registry/]organization/name[:tag] or …@sha256:<hex>. Lume pulls only by tag, so a "
      "tag is resolved first and Lume's .manifest-digest must match it afterwards (a tag moved "
      "meanwhile fails with exit 4 and leaves the VM for inspection); a digest is pulled "
      "through its immutable tag sha256-<hex>.\nLUME_HOME tells where Lume keeps its VM "
      "directories (default ~/.lume).\nExample: lume-unlock pull "
      "ghcr.io/trycua/macos-tahoe-cua:latest demo");
  command->add_option("REF", options->reference, "image reference")->required();
  command->add_option("NAME", options->vm, "local VM name ([A-Za-z0-9._-])")->required();
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
  guest::add_connection_options(*command, options->connection);
  command->callback([options, &context, &exit_code] { exit_code = run_pull(*options, context); });
}

} // namespace lume_unlock::cli
