#pragma once

#include "guest/session.hpp"
#include "pipeline/status.hpp"
#include "provenance/provenance.hpp"
#include "util/result.hpp"

namespace lume_unlock::pipeline {

/// A guest that came out of a baked image, checked against the record the bake left inside it.
struct BakedGuestCheck {
  provenance::Provenance record; ///< the guest's provenance.json, as baked
  StatusReport report;           ///< every promise of that record, compared with the guest now
  bool verified() const { return !report.drift(); }
};

/// Reads the guest's provenance.json (DESIGN §5) and checks the guest against it the way
/// `status` checks a guest against the host record: every shim file's SHA-256, enablement.json
/// and the guard file, every agent's plist and whether it is loaded, no stray agents. Read-only.
/// Fails (verification) when the guest holds no readable record: then the image was not baked
/// by lume-unlock, or the record was removed.
Result<BakedGuestCheck> check_baked_guest(guest::GuestSession& session);

} // namespace lume_unlock::pipeline
