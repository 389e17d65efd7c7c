#include "pipeline/pull.hpp"

#include "guest/guest_layout.hpp"
#include "lume/vm_lifecycle.hpp"
#include "provenance/provenance.hpp"

#include <variant>

namespace lume_unlock::pipeline {

namespace {

/// The hardware Lume reports for a VM, as the provenance records it.
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

/// The transfer of a pull: the registry image into VM `vm` through Lume.
transfer::ImagePullRequest image_pull_request(const PullOptions& options,
                                              const PullServices& services) {
  return {
      options.reference, options.vm, options.pull_timeout, services.progress, options.trusted_keys};
}

} // namespace

transfer::ImagePullPlan plan_pull(const PullOptions& options, PullServices& services) {
  return transfer::plan_image_pull(
             services.lume, services.registry, image_pull_request(options, services))
      .value_or_throw();
}

PullOutcome pull_vm(const PullOptions& options, PullServices& services) {
  transfer::PulledImage image =
      transfer::pull_image(services.lume, services.registry, image_pull_request(options, services))
          .value_or_throw();

  provenance::Provenance pulled;
  pulled.vm = options.vm;
  pulled.lume_url = options.lume_url;
  pulled.image = provenance::ImageInfo{
      image.reference, image.digest.str(), image.lume_manifest_digest, std::nullopt};
  if (image.signature) {
    pulled.image->signed_by = image.signature->key_fingerprint;
  }
  const lume::VmState state = services.lume.get(lume::VmRef{options.vm}).value_or_throw();
  if (const auto* details = std::get_if<lume::VmDetails>(&state)) {
    pulled.hardware = hardware_of(*details);
  }
  auto existing = provenance::read_provenance(options.state_dir, options.vm);
  const auto record = provenance::record_after_pull(
      existing.ok() ? std::optional<provenance::Provenance>(existing.value()) : std::nullopt,
      pulled,
      provenance::rfc3339_now());
  if (record) {
    provenance::write_provenance(options.state_dir, *record).value_or_throw();
  }
  std::string path = provenance::provenance_path(options.state_dir, options.vm).value_or_throw();
  return {image, pulled, path};
}

Result<BakedGuestCheck> check_baked_guest(guest::GuestSession& session) {
  LUME_UNLOCK_TRY_ASSIGN(auto home, session.run("printf '%s' \"$HOME\""));
  const std::string path = guest::support_dir_of_home(home.stdout_text) + "/provenance.json";
  const std::string what = "verifying the guest against its baked record";
  auto text = session.read_file(path, provenance::k_max_provenance_bytes);
  if (!text.ok()) {
    return Error(ErrorCategory::verification,
                 what,
                 "the guest has no readable " + path + " (" + text.error().why() + ")",
                 "only images made with `lume-unlock bake` carry the record; bake the image "
                 "again or use `lume-unlock create`");
  }
  auto record = provenance::parse_provenance(text.value());
  if (!record.ok()) {
    return Error(ErrorCategory::verification,
                 what,
                 path + " is not a provenance record: " + record.error().why(),
                 "bake the image again");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto report, check_status(session, record.value()));
  return BakedGuestCheck{record.value(), path, report};
}

Result<provenance::Provenance> adopt_baked_guest(guest::GuestSession& session,
                                                 const BakedGuestCheck& check,
                                                 const provenance::Provenance& pulled,
                                                 const std::string& state_dir,
                                                 const std::string& now) {
  const provenance::Provenance adopted = provenance::adopt_baked_record(check.record, pulled, now);
  if (!provenance::same_provenance(adopted, check.record)) {
    LUME_UNLOCK_TRY(
        session.upload(provenance::to_json(adopted).dump(2) + "\n", check.record_path, 0644));
  }
  LUME_UNLOCK_TRY(provenance::write_provenance(state_dir, adopted));
  return adopted;
}

BakedGuestCheck verify_pulled_vm(const PullOptions& options,
                                 PullServices& services,
                                 const provenance::Provenance& pulled) {
  const lume::VmTransition booted =
      lume::boot_vm(services.lume, options.vm, options.boot_timeout, services.progress)
          .value_or_throw();
  if (services.debug) {
    services.debug("boot: " + booted.summary);
  }
  auto session = apply::connect_when_ready(services.connect, options.ssh_wait);
  BakedGuestCheck check = check_baked_guest(*session).value_or_throw();
  if (check.verified()) {
    adopt_baked_guest(*session, check, pulled, options.state_dir, provenance::rfc3339_now())
        .value_or_throw();
  }
  return check;
}

} // namespace lume_unlock::pipeline
