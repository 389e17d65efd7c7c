// Part of CreatePipeline (pipeline/create.hpp): what a create leaves behind: the provenance
// record (DESIGN §7) in the guest and on the host, and, with --bench, the figures measured and
// recorded again. Each step describes its own part of the plan beside the work it does.

#include "enablement/guest_layout.hpp"
#include "pipeline/create.hpp"
#include "provenance/provenance.hpp"

namespace lume_unlock::pipeline {

namespace {

provenance::ImageInfo image_info(const transfer::PulledImage& pulled) {
  provenance::ImageInfo image;
  image.reference = pulled.reference;
  image.digest = pulled.digest.str();
  if (!pulled.lume_manifest_digest.empty()) {
    image.lume_manifest_digest = pulled.lume_manifest_digest;
  }
  if (pulled.signature) {
    image.signed_by = pulled.signature->key_fingerprint;
  }
  return image;
}

provenance::HardwareInfo hardware_info(const lume::VmDetails& vm) {
  provenance::HardwareInfo hardware;
  hardware.cpu = static_cast<std::int64_t>(vm.cpu_count);
  hardware.memory_bytes = vm.memory_size;
  if (vm.disk_size.total > 0) {
    hardware.disk_bytes = vm.disk_size.total;
  }
  return hardware;
}

provenance::GuestInfo guest_info(const guest::GuestFacts& facts) {
  provenance::GuestInfo guest;
  if (facts.product_version) {
    guest.os = "macOS";
    guest.version = facts.product_version;
    guest.build = facts.build_version;
  } else if (!facts.kernel.empty()) {
    guest.os = facts.kernel;
  }
  if (!facts.machine.empty()) {
    guest.arch = facts.machine;
  }
  return guest;
}

/// The installed shim: its bundle (and the artifact it came from), platform, profile and the
/// hash of every file put into the guest.
provenance::ShimInfo shim_info(const CreateOptions& options,
                               const recipe::Recipe& recipe,
                               const apply::InstalledShim& installed) {
  provenance::ShimInfo shim;
  shim.bundle_version = installed.bundle_version;
  if (options.bundle_artifact && options.bundle_artifact->digest) {
    shim.bundle_reference = options.bundle_artifact->str();
    shim.bundle_digest = options.bundle_artifact->digest->str();
    shim.bundle_signed_by = options.bundle_signed_by;
  }
  shim.platform = installed.platform;
  shim.profile = provenance::ShimProfile{
      static_cast<std::int64_t>(recipe.shim.profile.apple_family_max),
      static_cast<std::int64_t>(recipe.shim.profile.max_threadgroup_memory)};
  std::vector<provenance::FileHash> files = {{installed.shim.path, installed.shim.sha256}};
  for (const auto& file : installed.support) {
    files.push_back({file.path, file.sha256});
  }
  if (installed.probe) {
    files.push_back({installed.probe->path, installed.probe->sha256});
  }
  shim.files = files;
  if (installed.external && recipe.shim.external) {
    shim.external = provenance::FileHash{recipe.shim.external->dylib, installed.shim.sha256};
  }
  return shim;
}

} // namespace

Step CreatePipeline::provenance_step() {
  return {"provenance", "write the provenance record (guest, then host)", std::nullopt, "", [this] {
            return step_provenance();
          }};
}

StepResult CreatePipeline::step_provenance() {
  const lume::VmDetails vm = current_details();
  const std::string guest_path =
      enablement::support_dir_of_home(m_facts->home) + "/provenance.json";
  std::optional<provenance::Provenance> previous;
  if (auto text = m_session->read_file(guest_path, provenance::k_max_provenance_bytes); text.ok()) {
    if (auto parsed = provenance::parse_provenance(text.value()); parsed.ok()) {
      previous = parsed.value();
    }
  }
  std::optional<provenance::Provenance> host_previous;
  if (auto host = provenance::read_provenance(m_options.state_dir, m_options.vm); host.ok()) {
    host_previous = host.value();
  }
  provenance::Provenance record = build_provenance(m_options,
                                                   m_recipe,
                                                   m_outcome,
                                                   vm,
                                                   *m_facts,
                                                   m_enablement_records,
                                                   previous ? previous : host_previous,
                                                   provenance::rfc3339_now());
  if (previous && host_previous && provenance::same_provenance(record, *previous) &&
      provenance::same_provenance(record, *host_previous)) {
    m_outcome.record = *host_previous;
    return {false, "guest and host records up to date"};
  }
  const std::string bytes = provenance::to_json(record).dump(2) + "\n";
  m_session->upload(bytes, guest_path, 0644).value_or_throw();
  provenance::write_provenance(m_options.state_dir, record).value_or_throw();
  m_outcome.record = record;
  return {true,
          "wrote " + guest_path + " and " +
              provenance::provenance_path(m_options.state_dir, m_options.vm).value()};
}

Step CreatePipeline::bench_step() {
  return {"bench",
          "measure with llama-bench stock and unlocked: " + describe_bench(*m_options.bench) +
              "; record the figures (guest, then host)",
          std::nullopt,
          "",
          [this] { return step_bench(); }};
}

StepResult CreatePipeline::step_bench() {
  BenchOptions options = *m_options.bench;
  options.vm = m_options.vm;
  options.state_dir = m_options.state_dir;
  BenchOutcome outcome = run_bench(*m_session, options, m_services.progress).value_or_throw();
  m_outcome.bench = outcome;
  if (!outcome.failures.empty()) {
    std::string why = "the gate failed:";
    for (const std::string& failure : outcome.failures) {
      why += "\n  " + failure;
    }
    throw Error(ErrorCategory::verification,
                "bench of VM '" + m_options.vm.str() + "'",
                why,
                "the VM '" + m_options.vm.str() +
                    "' was created and left in place, and the figures are in its record "
                    "('lume-unlock status " +
                    m_options.vm.str() +
                    "'); fix the cause and measure again with "
                    "'lume-unlock bench " +
                    m_options.vm.str() + " --model " + options.request.model + "'");
  }
  return {true, bench_summary(outcome.record)};
}

provenance::Provenance build_provenance(const CreateOptions& options,
                                        const recipe::Recipe& recipe,
                                        const CreateOutcome& outcome,
                                        const lume::VmDetails& vm,
                                        const guest::GuestFacts& facts,
                                        const std::vector<provenance::EnablementRecord>& enablement,
                                        const std::optional<provenance::Provenance>& previous,
                                        const std::string& now) {
  provenance::Provenance record;
  record.vm = options.vm;
  if (!options.lume_url.empty()) {
    record.lume_url = options.lume_url;
  }
  if (outcome.image) {
    record.image = image_info(*outcome.image);
  }
  record.hardware = hardware_info(vm);
  record.guest = guest_info(facts);
  if (outcome.shim) {
    record.shim = shim_info(options, recipe, outcome.shim->installed);
  }
  record.enablement = enablement;
  if (outcome.artifacts) {
    record.artifacts = outcome.artifacts->records;
  }
  if (outcome.probe) {
    record.probe = provenance::ProbeInfo{outcome.probe->stock, outcome.probe->unlocked};
  }
  if (options.recipe_path) {
    record.recipe = provenance::RecipeInfo{*options.recipe_path, recipe.sha256};
  }
  // The last bench stays until a new one replaces it: a re-create that changes nothing must
  // not drop the figures `status` shows (and a baked image carries them).
  if (previous) {
    record.bench = previous->bench;
  }
  record.created_at = previous && previous->created_at ? previous->created_at : now;
  record.updated_at = now;
  return record;
}

} // namespace lume_unlock::pipeline
