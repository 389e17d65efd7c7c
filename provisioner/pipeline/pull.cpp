#include "pipeline/pull.hpp"

#include "lume/client.hpp"
#include "pipeline/vm_state.hpp"
#include "provenance/provenance.hpp"

#include <variant>

namespace lume_unlock::pipeline {

namespace {

/// Reads the guest's provenance.json (DESIGN §5) and checks the guest against it the way
/// `status` checks a guest against the host record. Fails (verification) when the guest holds no
/// readable record: then the image was not baked by lume-unlock, or the record was removed.
Result<BakedGuestCheck> check_baked_guest(guest::GuestSession& session) {
  LUME_UNLOCK_TRY_ASSIGN(auto home, session.run("printf '%s' \"$HOME\""));
  const std::string path = guest_record_path(home.stdout_text);
  auto record = read_guest_record(session, home.stdout_text);
  if (!record.ok()) {
    return Error(ErrorCategory::verification,
                 "verifying the guest against its baked record",
                 "the guest has no readable provenance record " + path + " (" +
                     record.error().why() + ")",
                 "only images made with `lume-unlock bake` carry the record; bake the image "
                 "again or use `lume-unlock create`");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto report, check_status(session, record.value()));
  return BakedGuestCheck{record.value(), home.stdout_text, report};
}

} // namespace

PullPipeline::PullPipeline(PullOptions options, PullServices services)
    : m_options(std::move(options)), m_services(std::move(services)) {}

PullPipeline::~PullPipeline() = default;

Plan PullPipeline::plan(bool observe) {
  const std::string& vm = m_options.vm.str();
  const transfer::ImagePullRequest request{m_options.reference,
                                           m_options.vm,
                                           m_options.pull_timeout,
                                           m_services.progress,
                                           m_options.trusted_keys};
  Plan plan("pull");
  Step image = Step::unobserved("image",
                                "pull " + m_options.reference.str() + " into VM '" + vm +
                                    "' through Lume, check its .manifest-digest and record the "
                                    "provenance",
                                [this, request] { return step_image(request); });
  if (observe) {
    const transfer::ImagePullPlan& seen = m_outcome.observed.emplace(
        transfer::plan_image_pull(m_services.lume, m_services.registry, request).value_or_throw());
    image.description = "pull " + seen.reference + " (" + seen.digest.str() + ") into VM '" + vm +
                        "' through Lume and check its .manifest-digest";
    image.in_place = seen.in_place;
    image.observed = seen.in_place   ? "VM '" + vm + "' already holds " + seen.digest.str()
                     : seen.conflict ? "would refuse: " + seen.conflict->why()
                                     : "VM '" + vm + "' does not exist";
    if (seen.signature) {
      image.observed += "; " + verified_line(seen.digest, *seen.signature);
    }
  }
  plan.add(std::move(image));
  if (m_options.verify) {
    plan.add(Step::unobserved("boot", "boot VM '" + vm + "' and wait for SSH", [this] {
      return step_result(
          lume::boot_vm(m_services.lume, m_options.vm, m_options.boot_timeout, m_services.progress)
              .value_or_throw());
    }));
    plan.add(Step::unobserved(
        "verify", "check the guest against the record baked into the image and adopt it", [this] {
          return step_verify();
        }));
  }
  return plan;
}

StepResult PullPipeline::step_image(const transfer::ImagePullRequest& request) {
  const transfer::PulledImage& image = m_outcome.image.emplace(
      transfer::pull_image(m_services.lume, m_services.registry, request).value_or_throw());
  provenance::Provenance& pulled = m_outcome.pulled;
  pulled.vm = m_options.vm;
  pulled.lume_url = m_options.lume_url;
  pulled.image = image_info(image);
  const lume::VmState state = m_services.lume.get(lume::VmRef{m_options.vm}).value_or_throw();
  if (const auto* details = std::get_if<lume::VmDetails>(&state)) {
    pulled.hardware = hardware_of(*details);
  }
  auto existing = provenance::read_provenance(m_options.state_dir, m_options.vm);
  const auto record = provenance::record_after_pull(
      existing.ok() ? std::optional<provenance::Provenance>(existing.value()) : std::nullopt,
      pulled,
      provenance::rfc3339_now());
  if (record) {
    provenance::write_provenance(m_options.state_dir, *record).value_or_throw();
  }
  m_outcome.record_path =
      provenance::provenance_path(m_options.state_dir, m_options.vm).value_or_throw();
  return {image.changed,
          image.changed ? "pulled " + image.reference + " (" + image.digest.str() + ")"
                        : "already holds " + image.digest.str()};
}

StepResult PullPipeline::step_verify() {
  m_session = apply::connect_when_ready(m_services.connect, m_options.ssh_wait);
  const BakedGuestCheck& check =
      m_outcome.check.emplace(check_baked_guest(*m_session).value_or_throw());
  // A verified guest becomes this VM's own: the baked record adopted with what the pull
  // established, so that status, verify, allow and remove work on it as on a created VM.
  if (check.verified()) {
    const provenance::Provenance adopted =
        provenance::adopt_baked_record(check.record, m_outcome.pulled, provenance::rfc3339_now());
    write_vm_record(*m_session, check.home, m_options.state_dir, adopted).value_or_throw();
  }
  const std::size_t items = check.report.items.size();
  return {check.verified(),
          check.verified() ? std::to_string(items) + " items of the baked record match; adopted"
                           : std::to_string(check.report.drifted().size()) + " of " +
                                 std::to_string(items) + " items differ from the baked record"};
}

std::string verified_line(const oci::Digest& digest, const signing::VerifiedSignature& signature) {
  return "signature verified: " + digest.str() + " signed by " + signature.key_fingerprint + " (" +
         signature.key_source + ")";
}

} // namespace lume_unlock::pipeline
