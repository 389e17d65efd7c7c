#pragma once

#include "enablement/enablement_list.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace lume_unlock::apply {

/// What the two probe runs (stock, and with the shim injected) say, judged against the profile
/// (reference/metal-capabilities.md §4.1, "shim active and safe").
struct ProbeVerdict {
  std::vector<std::string> problems;         ///< one sentence each; empty = pass
  std::vector<std::string> changed_families; ///< codes whose answer the shim changed ("1006")
  std::uint64_t stock_threadgroup_memory = 0;
  std::uint64_t unlocked_threadgroup_memory = 0;
  bool ok() const { return problems.empty(); }
};

/// The pass criterion, on two `lume-unlock-probe --json` documents (DESIGN §4.5):
/// the unlocked run has the shim active; Apple families 1001..apple_family_max answer true and
/// apple_family_max+1 false (when the probe asked it); every non-Apple family answers as in the
/// stock run; max_threadgroup_memory >= the profile's; MLX residency sets stay off. Pure.
/// `shim_reports_state` false (an external dylib, e.g. Cua's certified build, which exports no
/// lume_unlock_shim_state, so the probe says "absent" even while it is loaded): the shim state
/// is not judged, only the device's answers above, which a stock device fails (families
/// 1006..ceiling false, 32768 bytes).
ProbeVerdict judge_probe(const nlohmann::json& stock,
                         const nlohmann::json& unlocked,
                         const enablement::Profile& profile,
                         bool shim_reports_state = true);

/// Ok, or an Error (category verification, exit 6) naming the first problem (the family) and
/// the number of others, with a hint.
Status require_probe_pass(const ProbeVerdict& verdict, const std::string& vm);

} // namespace lume_unlock::apply
