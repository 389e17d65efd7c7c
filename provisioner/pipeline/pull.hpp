#pragma once

#include "apply/guest_access.hpp"
#include "guest/session.hpp"
#include "lume/client.hpp"
#include "lume/types.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "pipeline/plan.hpp"
#include "pipeline/status.hpp"
#include "provenance/provenance.hpp"
#include "signing/signing.hpp"
#include "transfer/image_pull.hpp"
#include "util/progress.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// What `lume-unlock pull REF NAME [--verify]` was asked for.
struct PullOptions {
  oci::Reference reference; ///< as the user wrote it (tag and/or digest)
  lume::VmName vm{"vm"};    ///< a placeholder until the caller sets the parsed name
  std::string lume_url;     ///< recorded in the provenance
  std::string state_dir;    ///< the host record lives in <state_dir>/vms/<vm>/
  std::chrono::milliseconds pull_timeout{std::chrono::hours(6)};
  /// --verify: boot the pulled VM and check its guest against the record baked into it; how long
  /// the VM may take to boot with SSH open, and how long a refused first SSH login is retried.
  bool verify = false;
  std::chrono::milliseconds boot_timeout{std::chrono::minutes(10)};
  std::chrono::milliseconds ssh_wait{std::chrono::seconds(60)};
  /// --recipe's trust: keys: the digest must carry a signature by one of them before Lume pulls.
  std::vector<signing::TrustedKey> trusted_keys;
};

/// The collaborators a pull runs with (all outlive the pipeline).
struct PullServices {
  lume::LumeApi& lume;
  oci::RegistryClient& registry;
  apply::GuestConnector connect; ///< --verify only
  util::ProgressCallback progress;
};

/// A guest that came out of a baked image, checked against the record the bake left inside it.
struct BakedGuestCheck {
  provenance::Provenance record; ///< the guest's provenance.json, as baked
  std::string home;              ///< the guest's home, where the record is
  StatusReport report;           ///< every promise of that record, compared with the guest now
  bool verified() const { return !report.drift(); }
};

/// What a pull found (dry run) and did.
struct PullOutcome {
  std::optional<transfer::ImagePullPlan> observed; ///< plan(true): what the image step would do
  std::optional<transfer::PulledImage> image;      ///< the image now in the VM
  /// What the pull established about the VM (name, Lume URL, image, hardware: the sections a
  /// pull replaces in a record) and where the host record is.
  provenance::Provenance pulled;
  std::string record_path;
  std::optional<BakedGuestCheck> check; ///< --verify
};

/// `pull`: the steps `image` (transfer::pull_image: resolve, pull through Lume, compare Lume's
/// .manifest-digest; then the VM's hardware from Lume and the host record,
/// provenance::record_after_pull, not rewritten when unchanged) and, with --verify, `boot` and
/// `verify`: the guest checked against the provenance.json the bake left in it the way `status`
/// checks a guest (shim files, enablement.json, the guard file, agents, no strays) and, when it
/// matches, that record adopted (provenance::adopt_baked_record) in the guest and on the host.
/// A guest that differs is not an error: outcome().check says so and nothing is adopted.
class PullPipeline {
public:
  PullPipeline(PullOptions options, PullServices services);
  ~PullPipeline();

  /// With `observe` (--dry-run) the reference is resolved and the VM looked at
  /// (transfer::plan_image_pull: exists, holds the digest, a name conflict) so the image step is
  /// marked in place or not; throws Error (registry, trust) when the reference does not resolve
  /// or is not signed. Without, the image step checks for itself.
  Plan plan(bool observe);
  const PullOutcome& outcome() const { return m_outcome; }
  std::uint64_t ssh_commands() const { return m_session ? m_session->command_count() : 0; }

private:
  StepResult step_image(const transfer::ImagePullRequest& request);
  StepResult step_verify();

  PullOptions m_options;
  PullServices m_services;
  std::unique_ptr<guest::GuestSession> m_session;
  PullOutcome m_outcome;
};

/// Which key vouched for the digest, the same line for a dry run and a pull.
std::string verified_line(const oci::Digest& digest, const signing::VerifiedSignature& signature);

} // namespace lume_unlock::pipeline
