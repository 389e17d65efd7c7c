#include "lume/vm_power.hpp"

#include "lume/wait.hpp"

namespace lume_unlock::lume {

namespace {

Result<VmDetails> details_now(LumeApi& lume, const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(const VmState state, lume.get(VmRef{vm}));
  if (const auto* details = std::get_if<VmDetails>(&state)) {
    return *details;
  }
  return Error(ErrorCategory::lume_api,
               "VM '" + vm + "'",
               "it is still being pulled (" + lume::describe(state) + ")",
               "wait for the pull to finish, then run the command again");
}

} // namespace

Result<VmTransition> boot_vm(LumeApi& lume,
                             const std::string& vm,
                             std::chrono::milliseconds timeout,
                             const util::ProgressCallback& progress,
                             const std::vector<SharedDirectory>& shared) {
  LUME_UNLOCK_TRY_ASSIGN(const VmDetails details, details_now(lume, vm));
  if (details.ssh_ready()) {
    return VmTransition{false, "running at " + details.ip_address.value_or("?")};
  }
  bool started = false;
  if (details.status != VmStatus::running) {
    RunOptions run;
    run.no_display = true;
    run.shared_directories = shared;
    LUME_UNLOCK_TRY(lume.run(VmRef{vm}, run));
    started = true;
  }
  WaitOptions wait;
  wait.what = "VM '" + vm + "' to be running with SSH reachable";
  wait.timeout = timeout;
  wait.first_interval = std::chrono::milliseconds(100);
  wait.progress = progress;
  LUME_UNLOCK_TRY_ASSIGN(const VmState state, wait_until(lume, VmRef{vm}, is_ssh_ready, wait));
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
  WaitOptions wait;
  wait.what = "VM '" + vm + "' to stop";
  wait.timeout = timeout;
  wait.first_interval = std::chrono::milliseconds(100);
  wait.progress = progress;
  LUME_UNLOCK_TRY(wait_until(lume, VmRef{vm}, is_stopped, wait));
  return VmTransition{true, "stopped"};
}

} // namespace lume_unlock::lume
