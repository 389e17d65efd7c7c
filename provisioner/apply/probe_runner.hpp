#pragma once

#include "apply/shim_record.hpp"
#include "enablement/enablement_list.hpp"
#include "guest/session.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>

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

} // namespace lume_unlock::apply
