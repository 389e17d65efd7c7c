#pragma once

#include "lume/api.hpp"
#include "util/progress.hpp"

#include <chrono>
#include <functional>
#include <string>

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

} // namespace lume_unlock::lume
