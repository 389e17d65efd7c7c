#pragma once

#include "guest/session.hpp"
#include "provenance/provenance.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace lume_unlock::pipeline {

/// One thing the provenance record promises, compared with the guest now.
struct StatusItem {
  StatusItem() = default;
  StatusItem(std::string item_, std::string expected_, std::string found_, std::string fix_ = {})
      : item(std::move(item_)), expected(std::move(expected_)), found(std::move(found_)),
        fix(std::move(fix_)) {}

  std::string item;     ///< "shim file <path>", "guard file", "agent 'x' plist", ...
  std::string expected; ///< what the record (or the applied list) says
  std::string found;    ///< what the guest holds ("missing" when absent)
  std::string fix;      ///< how to bring it back, when the item drifted and a fix is known
  bool ok() const { return expected == found; }
};

struct StatusReport {
  std::vector<StatusItem> items;
  std::uint64_t commands = 0; ///< remote commands it took
  bool drift() const;
  /// The items that differ.
  std::vector<StatusItem> drifted() const;
};

/// Compares the host record of a VM with its guest (4 commands: facts, one observe of the
/// enablement files and agents, one `shasum` of the shim and artifact files, one realpath of the
/// programs): every installed artifact file's SHA-256 (a changed one has a `fix`),
/// every shim file's SHA-256, the guard file (as rendered from enablement.json), enablement.json
/// (the entries' names and programs), each program's real path now against the recorded one (a
/// link re-pointed since, say by `brew upgrade`, drifts, with a `fix` that says to apply the list
/// again), each agent's plist SHA-256 and whether it is loaded, no stray agent of ours, and the
/// guest's provenance.json (timestamps aside).
/// Every guest file the record's artifacts list, in record order.
std::vector<provenance::ArtifactFile> recorded_artifact_files(const provenance::Provenance& record);

/// The guest paths to hash for the record's artifacts: every recorded file, and for a shared
/// item also the blob its link leads to inside the share (its bytes are checked there).
std::vector<std::string> artifact_paths(const provenance::Provenance& record);

/// One item per recorded artifact file against `found` (path → SHA-256; absent = missing), with
/// a fix for each that differs.
std::vector<StatusItem> artifact_items(const provenance::Provenance& record,
                                       const std::map<std::string, std::string>& found);

/// The recorded artifact files re-hashed in the guest (ONE command; none without artifacts).
Result<std::vector<StatusItem>> check_artifacts(guest::GuestSession& session,
                                                const provenance::Provenance& record);

Result<StatusReport> check_status(guest::GuestSession& session,
                                  const provenance::Provenance& record);

nlohmann::json to_json(const StatusReport& report);

} // namespace lume_unlock::pipeline
