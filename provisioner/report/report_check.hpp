#pragma once

#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lume_unlock::report {

/// What `report --check` read of the VM now.
struct ObservedVm {
  std::optional<std::string> image_digest;        ///< the VM's provenance record on this host
  std::map<std::string, std::string> file_sha256; ///< guest path → sha256 (absent: missing)
  nlohmann::json probe_stock;                     ///< lume-unlock-probe --json, run again
  nlohmann::json probe_unlocked;
};

/// One fact of the report compared with the VM now.
struct CheckItem {
  CheckItem() = default;
  CheckItem(std::string item_, std::string expected_, std::string found_)
      : item(std::move(item_)), expected(std::move(expected_)), found(std::move(found_)) {}
  std::string item;     ///< "image digest", "shim file <path>", "artifact file <path>", …
  std::string expected; ///< what the report says
  std::string found;    ///< what the VM holds now ("missing" when absent)
  bool ok() const { return expected == found; }
};

/// The report.json of a report folder, checked to be one: a JSON object whose schema is
/// k_report_schema and whose vm, image, shim.files, artifacts and probe have their types.
/// Fails (category verification) naming `source` and the key.
Result<nlohmann::json> parse_report(const std::string& text, const std::string& source);

/// Every guest file whose sha256 the report holds: the shim files, then the artifacts' files.
std::vector<std::string> report_guest_files(const nlohmann::json& report);

/// The report's image digest, each shim and artifact file's sha256, and the probe's answers
/// (each family and the threadgroup memory, stock and unlocked) against `now`, in that order.
std::vector<CheckItem> compare_report(const nlohmann::json& report, const ObservedVm& now);

} // namespace lume_unlock::report
