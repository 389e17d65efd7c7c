#pragma once

#include "apply/shim_installer.hpp"
#include "enablement/enablement_list.hpp"
#include "guest/session.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace lume_unlock::apply {

/// Both `lume-unlock-probe --json` documents of one guest.
struct ProbeRun {
  nlohmann::json stock;
  nlohmann::json unlocked;
};

/// The ONE remote command that runs the installed probe twice from `/`: stock, then with the
/// shim injected (the shim's injection variable, LUME_METAL_APPLE_FAMILY_MAX and
/// LUME_METAL_MAX_THREADGROUP_MEMORY from `profile`, then `extra_env` — a test hook, e.g.
/// LUME_UNLOCK_DISABLE=1). On LD_PRELOAD platforms (Linux guests) LD_LIBRARY_PATH names the
/// shim's directory, which also holds the support libraries (the emulated Metal device), and
/// LD_PRELOAD only the shim's file name: glibc splits LD_PRELOAD at spaces.
/// A usage error when the installed shim has no probe.
Result<std::string> probe_command(const InstalledShim& shim,
                                  const enablement::Profile& profile,
                                  const std::map<std::string, std::string>& extra_env = {});

/// Splits and parses probe_command()'s output (category guest naming the run that printed no
/// JSON, with its stderr).
Result<ProbeRun> parse_probe_output(const guest::CommandResult& result);

/// Runs probe_command() in `session` (one round trip) and parses it.
Result<ProbeRun> run_probes(guest::GuestSession& session,
                            const InstalledShim& shim,
                            const enablement::Profile& profile,
                            const std::map<std::string, std::string>& extra_env = {});

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
