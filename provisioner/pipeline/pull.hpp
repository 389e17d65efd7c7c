#pragma once

#include "apply/guest_access.hpp"
#include "guest/session.hpp"
#include "lume/api.hpp"
#include "lume/types.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "pipeline/status.hpp"
#include "provenance/provenance.hpp"
#include "signing/signature_verifier.hpp"
#include "transfer/image_pull.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"

#include <chrono>
#include <functional>
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
  /// --verify: how long the VM may take to boot with SSH open, and how long a refused or dropped
  /// first SSH login is retried.
  std::chrono::milliseconds boot_timeout{std::chrono::minutes(10)};
  std::chrono::milliseconds ssh_wait{std::chrono::seconds(60)};
  /// --recipe's trust: keys: the digest must carry a signature by one of them before Lume pulls.
  std::vector<signing::TrustedKey> trusted_keys;
};

/// The collaborators a pull runs with (all outlive the calls).
struct PullServices {
  lume::LumeApi& lume;
  oci::RegistryClient& registry;
  apply::GuestConnector connect; ///< --verify only
  util::ProgressCallback progress;
  std::function<void(const std::string&)> debug; ///< lines for --verbose
};

/// `pull --dry-run`: what pull_vm would do, observed without changing anything (the reference
/// resolved, whether the VM exists and holds that digest, a name conflict).
/// Throws Error (registry) when the reference does not resolve.
transfer::ImagePullPlan plan_pull(const PullOptions& options, PullServices& services);

/// What a pull did: the image now in the VM, what the pull established about the VM (name, Lume
/// URL, image, hardware: the sections a pull replaces in a record) and where the host record is.
struct PullOutcome {
  transfer::PulledImage image;
  provenance::Provenance pulled;
  std::string record_path;
};

/// Pulls the image (transfer::pull_image: resolve, pull through Lume, compare Lume's
/// .manifest-digest), reads the VM's hardware from Lume and records the provenance on the host
/// (provenance::record_after_pull: the rest of an existing record is kept; an unchanged record
/// is not rewritten). Throws Error (the failing step's category).
PullOutcome pull_vm(const PullOptions& options, PullServices& services);

/// A guest that came out of a baked image, checked against the record the bake left inside it.
struct BakedGuestCheck {
  provenance::Provenance record; ///< the guest's provenance.json, as baked
  std::string record_path;       ///< where it is in the guest
  StatusReport report;           ///< every promise of that record, compared with the guest now
  bool verified() const { return !report.drift(); }
};

/// Reads the guest's provenance.json (DESIGN §5) and checks the guest against it the way
/// `status` checks a guest against the host record: every shim file's SHA-256, enablement.json
/// and the guard file, every agent's plist and whether it is loaded, no stray agents. Read-only.
/// Fails (verification) when the guest holds no readable record: then the image was not baked
/// by lume-unlock, or the record was removed.
Result<BakedGuestCheck> check_baked_guest(guest::GuestSession& session);

/// Makes a verified guest this VM's own: provenance::adopt_baked_record of the baked record and
/// `pulled`, written to the guest (when it differs from the baked one) and then to the host
/// state, so that status, verify, allow and remove work on the pulled VM as on a created one.
/// Returns the record written.
Result<provenance::Provenance> adopt_baked_guest(guest::GuestSession& session,
                                                 const BakedGuestCheck& check,
                                                 const provenance::Provenance& pulled,
                                                 const std::string& state_dir,
                                                 const std::string& now);

/// `pull --verify`: boots the pulled VM (lume::boot_vm), connects (retrying for ssh_wait),
/// checks the guest against its baked record, and adopts that record when the guest matches it.
/// Returns the check (not verified: differences, nothing adopted). Throws Error.
BakedGuestCheck verify_pulled_vm(const PullOptions& options,
                                 PullServices& services,
                                 const provenance::Provenance& pulled);

} // namespace lume_unlock::pipeline
