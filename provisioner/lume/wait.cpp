#include "lume/wait.hpp"

#include <algorithm>
#include <thread>

namespace lume_unlock::lume {

namespace {

class SystemWaitClock : public WaitClock {
public:
  std::chrono::steady_clock::time_point now() override { return std::chrono::steady_clock::now(); }
  void sleep_for(std::chrono::milliseconds duration) override {
    std::this_thread::sleep_for(duration);
  }
};

std::string seconds_text(std::chrono::steady_clock::duration d) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (ms % 1000 == 0) {
    return std::to_string(ms / 1000) + " s";
  }
  return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + " s";
}

void report(const WaitOptions& options, const std::string& detail, const VmState* state) {
  if (!options.progress) {
    return;
  }
  util::ProgressEvent event;
  event.step = options.what;
  event.detail = detail;
  if (state != nullptr) {
    if (const auto* pull = std::get_if<PullProgress>(state)) {
      event.done = static_cast<std::uint64_t>(std::clamp(pull->download_progress, 0.0, 100.0));
      event.total = 100;
      event.unit = "%";
    }
  }
  options.progress(event);
}

} // namespace

WaitClock& system_wait_clock() {
  static SystemWaitClock clock;
  return clock;
}

Result<VmState>
wait_until(LumeApi& api, const VmRef& vm, const VmPredicate& done, const WaitOptions& options) {
  WaitClock& clock = options.clock != nullptr ? *options.clock : system_wait_clock();
  const auto started = clock.now();
  const auto deadline = started + options.timeout;
  const std::string what_failed = "waiting for " + options.what;
  std::chrono::milliseconds interval =
      std::max(options.first_interval, std::chrono::milliseconds(1));
  std::optional<std::string> last_seen;
  std::optional<std::chrono::steady_clock::time_point> missing_since;
  while (true) {
    auto found = api.find(vm);
    if (!found.ok()) {
      return found.error().with_context(what_failed);
    }
    const auto now = clock.now();
    if (found.value()) {
      const VmState& state = *found.value();
      missing_since.reset();
      last_seen = describe(state);
      report(options, *last_seen, &state);
      if (done(state)) {
        util::ProgressEvent finished;
        finished.step = options.what;
        finished.detail = *last_seen;
        finished.finished = true;
        if (options.progress) {
          options.progress(finished);
        }
        return state;
      }
    } else {
      if (!missing_since) {
        missing_since = now;
      }
      report(options, "not found", nullptr);
      if (now - *missing_since >= options.vanish_grace) {
        const std::string before = last_seen ? "last seen " + *last_seen : "never seen";
        return Error(ErrorCategory::lume_api,
                     what_failed,
                     "VM '" + vm.name + "' disappeared (Lume no longer knows it; " + before + ")",
                     "a failed create or pull deletes the VM; see Lume's log "
                     "(/tmp/lume_daemon.log when started at login)");
      }
    }
    if (now >= deadline) {
      return Error(ErrorCategory::lume_api,
                   what_failed,
                   "gave up after " + seconds_text(options.timeout) +
                       "; last status: " + last_seen.value_or(missing_since ? "not found" : "none"),
                   "check the VM with `lume ls`; if it is still working, wait longer");
    }
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    clock.sleep_for(std::min(interval, remaining));
    interval = std::min(options.max_interval, interval + interval / 2);
  }
}

bool is_stopped(const VmState& state) {
  return status_of(state) == VmStatus::stopped;
}
bool is_running(const VmState& state) {
  return status_of(state) == VmStatus::running;
}
bool is_ssh_ready(const VmState& state) {
  const auto* d = std::get_if<VmDetails>(&state);
  return d != nullptr && d->ssh_ready();
}
bool is_pull_finished(const VmState& state) {
  return std::holds_alternative<VmDetails>(state);
}

} // namespace lume_unlock::lume
