#pragma once

#include "guest/session.hpp"
#include "pipeline/status.hpp"
#include "provenance/provenance.hpp"
#include "util/result.hpp"

namespace lume_unlock::pipeline {

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

/// Makes a verified guest this VM's own: the baked record with `pulled`'s VM name, Lume URL,
/// image and hardware (the bake's shim, enablement and probe sections kept), written to the
/// guest (when it differs) and then to the host state, so that status, verify, allow and
/// remove work on the pulled VM as on a created one. Returns the record written.
Result<provenance::Provenance> adopt_baked_record(guest::GuestSession& session,
                                                  const BakedGuestCheck& check,
                                                  const provenance::Provenance& pulled,
                                                  const std::string& state_dir,
                                                  const std::string& now);

} // namespace lume_unlock::pipeline
