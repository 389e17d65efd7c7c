#pragma once

#include "guest/session.hpp"
#include "lume/types.hpp"
#include "provenance/provenance.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// One thing the provenance record promises, compared with the guest now.
struct StatusItem {
  std::string item;     ///< "shim file <path>", "guard file", "agent 'x' plist", ...
  std::string expected; ///< what the record (or the applied list) says
  std::string found;    ///< what the guest holds ("missing" when absent)
  std::string fix = {}; ///< how to bring it back, when the item drifted and a fix is known
  bool ok() const { return expected == found; }
};

struct StatusReport {
  std::vector<StatusItem> items;
  std::uint64_t commands = 0; ///< remote commands it took
  bool drift() const { return !drifted().empty(); }
  std::vector<StatusItem> drifted() const;
};

/// The recorded artifact files re-hashed in the guest (ONE command; none without artifacts): an
/// installed file against its SHA-256; a shared item's link, and the host's cached blob the guest
/// reads through it. Each that differs has a fix.
Result<std::vector<StatusItem>> check_artifacts(guest::GuestSession& session,
                                                const provenance::Provenance& record);

/// Compares the host record of a VM with its guest (4 commands: facts, one observe of the
/// enablement files and agents, one `shasum` of the shim and artifact files, one realpath of the
/// programs): every shim and artifact file (as check_artifacts), the guard file (as rendered from
/// enablement.json), enablement.json (the entries' names and programs), each program's real path
/// now against the recorded one (a link re-pointed since, say by `brew upgrade`, drifts, with a
/// `fix`), each agent's plist SHA-256 and whether it is loaded, no stray agent of ours, and the
/// guest's provenance.json (timestamps aside).
Result<StatusReport> check_status(guest::GuestSession& session,
                                  const provenance::Provenance& record);

nlohmann::json to_json(const StatusReport& report);

/// Where Lume's VNC server for a VM listens, from its vncUrl ("vnc://:PASSWORD@HOST:PORT") with
/// the password left out: "HOST:PORT". Nothing when vncUrl is null: no listener (a run with
/// `"vnc":"disabled"` on a Lume newer than 0.5.3, or a stopped VM).
std::optional<std::string> vnc_listener(const lume::VmDetails& details);

} // namespace lume_unlock::pipeline
