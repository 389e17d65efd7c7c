#pragma once

#include "lume/api.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::lume {

/// Time for wait_until, replaceable in tests.
class WaitClock {
public:
  virtual ~WaitClock() = default;
  virtual std::chrono::steady_clock::time_point now() = 0;
  virtual void sleep_for(std::chrono::milliseconds duration) = 0;
};

/// The real steady clock and std::this_thread::sleep_for.
WaitClock& system_wait_clock();

struct WaitOptions {
  /// What is awaited, for progress and errors: "VM 'dev' to be running with SSH reachable".
  std::string what;
  /// The deadline, counted from the call.
  std::chrono::milliseconds timeout{600000};
  /// Polls start at `first_interval` and grow by half each time up to `max_interval`.
  std::chrono::milliseconds first_interval{250};
  std::chrono::milliseconds max_interval{5000};
  /// Lume briefly answers "not found" while a create moves its directory into place
  /// (reference §3.4), so a VM counts as gone only after being missing this long.
  std::chrono::milliseconds vanish_grace{3000};
  util::ProgressCallback progress;
  WaitClock* clock = nullptr; ///< null = system_wait_clock()
};

using VmPredicate = std::function<bool(const VmState&)>;

/// Polls GET /lume/vms/:name until `done` holds and returns that state. Fails (lume_api) when
/// the deadline passes (naming what was awaited and the last status seen), when the VM
/// disappears (missing for longer than vanish_grace, e.g. a failed create deletes it), or when
/// a GET fails (after the client's own bounded retries). Never busy-loops.
Result<VmState>
wait_until(LumeApi& api, const VmRef& vm, const VmPredicate& done, const WaitOptions& options);

/// Common predicates.
bool is_stopped(const VmState& state);       ///< status "stopped" (create or stop finished)
bool is_running(const VmState& state);       ///< status "running"
bool is_ssh_ready(const VmState& state);     ///< running + ipAddress + sshAvailable
bool is_pull_finished(const VmState& state); ///< full details (no longer "pulling")

/// What a power change did: whether the VM had to change state, and one line for the user.
struct VmTransition {
  bool changed = true;
  std::string summary;
};

/// Starts the VM headless unless it runs already (`run` with noDisplay, `shared` as its
/// sharedDirectories, and without a VNC listener unless `vnc`), then waits until Lume reports it
/// running with an IP address and SSH open. `changed` says whether it was started. A VM that runs
/// already keeps the shares it was started with (Lume reports none, so the caller checks in the
/// guest). Fails (lume_api) when Lume refuses, the VM is still being pulled, or the deadline
/// passes.
Result<VmTransition> boot_vm(LumeApi& lume,
                             const std::string& vm,
                             std::chrono::milliseconds timeout,
                             const util::ProgressCallback& progress,
                             const std::vector<SharedDirectory>& shared = {},
                             bool vnc = false);

/// Stops the VM unless it is stopped already, and waits until Lume reports it stopped.
Result<VmTransition> stop_vm(LumeApi& lume,
                             const std::string& vm,
                             std::chrono::milliseconds timeout,
                             const util::ProgressCallback& progress);

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
