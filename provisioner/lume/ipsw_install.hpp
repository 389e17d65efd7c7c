#pragma once

#include "lume/api.hpp"
#include "lume/vm_power.hpp"
#include "lume/wait.hpp"
#include "util/progress.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace lume_unlock::lume {

/// A macOS VM installed by Lume from an IPSW (`POST /lume/vms`, reference §3.4), set up
/// unattended so that it has the SSH account the rest of create needs.
struct IpswInstallRequest {
  std::string vm;
  std::string ipsw;       ///< "latest" or a path on the host
  std::string unattended; ///< preset ("tahoe") or a host YAML path
  std::uint32_t cpu = 8;
  std::uint64_t memory_bytes = 16ULL << 30;
  std::uint64_t disk_bytes = 80ULL << 30;
  std::optional<std::string> display;
  /// Download, install and unattended setup take long; the deadline covers all of it.
  std::chrono::milliseconds timeout{std::chrono::hours(3)};
  /// Lume's unattended setup boots and stops the VM several times and writes no marker between
  /// the phases (reference §3.4), so "stopped" counts as finished only after it held this long.
  std::chrono::milliseconds settle{std::chrono::seconds(90)};
  util::ProgressCallback progress;
  lume::WaitClock* clock = nullptr; ///< null = the system clock (tests pass a fake one)
};

/// Asks Lume to create and install the VM, then waits: `provisioning` (the IPSW install), then
/// the unattended phases, until the VM has stayed `stopped` for `settle`. A failed install makes
/// Lume delete the VM, which the wait reports (lume_api); so does the deadline.
Result<VmTransition> install_from_ipsw(LumeApi& lume, const IpswInstallRequest& request);

} // namespace lume_unlock::lume
