#include "lume/client.hpp"

#include <algorithm>
#include <thread>

namespace lume_unlock::lume {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

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

Result<VmDetails> details_now(LumeApi& lume, const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(const VmState state, lume.get(VmRef{vm}));
  if (const auto* details = std::get_if<VmDetails>(&state)) {
    return *details;
  }
  return Error(ErrorCategory::lume_api,
               "VM '" + vm + "'",
               "it is still being pulled (" + describe(state) + ")",
               "wait for the pull to finish, then run the command again");
}

/// Waits, polling every 100 ms at first, until `done` holds for `vm`.
Status wait_for(LumeApi& lume,
                const std::string& vm,
                const std::string& what,
                milliseconds timeout,
                const util::ProgressCallback& progress,
                const VmPredicate& done,
                VmState* state = nullptr) {
  WaitOptions wait;
  wait.what = what;
  wait.timeout = timeout;
  wait.first_interval = milliseconds(100);
  wait.progress = progress;
  LUME_UNLOCK_TRY_ASSIGN(VmState reached, wait_until(lume, VmRef{vm}, done, wait));
  if (state != nullptr) {
    *state = std::move(reached);
  }
  return ok_status();
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

Result<VmTransition> boot_vm(LumeApi& lume,
                             const std::string& vm,
                             std::chrono::milliseconds timeout,
                             const util::ProgressCallback& progress,
                             const std::vector<SharedDirectory>& shared,
                             bool vnc) {
  LUME_UNLOCK_TRY_ASSIGN(const VmDetails details, details_now(lume, vm));
  if (details.ssh_ready()) {
    return VmTransition{false, "running at " + details.ip_address.value_or("?")};
  }
  bool started = false;
  if (details.status != VmStatus::running) {
    RunOptions run;
    run.no_display = true;
    run.shared_directories = shared;
    run.vnc = vnc;
    LUME_UNLOCK_TRY(lume.run(VmRef{vm}, run));
    started = true;
  }
  VmState state;
  LUME_UNLOCK_TRY(wait_for(lume,
                           vm,
                           "VM '" + vm + "' to be running with SSH reachable",
                           timeout,
                           progress,
                           is_ssh_ready,
                           &state));
  return VmTransition{started, std::string(started ? "booted, " : "") + describe(state)};
}

Result<VmTransition> stop_vm(LumeApi& lume,
                             const std::string& vm,
                             std::chrono::milliseconds timeout,
                             const util::ProgressCallback& progress) {
  LUME_UNLOCK_TRY_ASSIGN(const VmDetails details, details_now(lume, vm));
  if (details.status == VmStatus::stopped) {
    return VmTransition{false, "stopped"};
  }
  LUME_UNLOCK_TRY(lume.stop(VmRef{vm}));
  LUME_UNLOCK_TRY(wait_for(lume, vm, "VM '" + vm + "' to stop", timeout, progress, is_stopped));
  return VmTransition{true, "stopped"};
}

Result<VmTransition> install_from_ipsw(LumeApi& lume, const IpswInstallRequest& request) {
  CreateRequest create;
  create.name = request.vm;
  create.cpu = request.cpu;
  create.memory_bytes = request.memory_bytes;
  create.disk_bytes = request.disk_bytes;
  if (request.display) {
    create.display = *request.display;
  }
  create.ipsw = request.ipsw;
  create.unattended = request.unattended;
  LUME_UNLOCK_TRY(lume.create(create));

  WaitClock& clock = request.clock != nullptr ? *request.clock : system_wait_clock();
  const auto deadline = clock.now() + request.timeout;
  const auto remaining = [&] {
    return std::max(milliseconds(0), duration_cast<milliseconds>(deadline - clock.now()));
  };
  WaitOptions wait;
  wait.what = "Lume to install macOS from " + request.ipsw + " into '" + request.vm +
              "' and set it up unattended (" + request.unattended + ")";
  wait.first_interval = milliseconds(100);
  wait.max_interval = std::min(milliseconds(5000), std::max(milliseconds(100), request.settle / 4));
  wait.progress = request.progress;
  wait.clock = &clock;
  for (;;) {
    wait.timeout = remaining();
    LUME_UNLOCK_TRY(wait_until(lume, VmRef{request.vm}, is_stopped, wait));
    // Stopped: finished, or between two unattended phases. Finished once it stays stopped.
    const auto stopped_at = clock.now();
    WaitOptions settle = wait;
    settle.what = "the unattended setup of '" + request.vm + "' to stay finished";
    settle.timeout = std::min(request.settle, remaining());
    auto restarted = wait_until(
        lume, VmRef{request.vm}, [](const VmState& state) { return !is_stopped(state); }, settle);
    if (!restarted.ok()) {
      if (clock.now() - stopped_at >= request.settle) {
        break; // stayed stopped for the whole settle time
      }
      return restarted.error(); // the VM vanished (failed install) or the deadline passed
    }
  }
  return VmTransition{
      true, "installed macOS from " + request.ipsw + ", unattended setup " + request.unattended};
}

} // namespace lume_unlock::lume
