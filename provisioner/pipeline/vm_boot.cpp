#include "pipeline/vm_boot.hpp"

#include "lume/wait.hpp"

#include <thread>

namespace lume_unlock::pipeline {

namespace {

lume::VmDetails details_now(lume::LumeApi& lume, const std::string& vm) {
  const lume::VmState state = lume.get(lume::VmRef{vm}).value_or_throw();
  if (const auto* details = std::get_if<lume::VmDetails>(&state)) {
    return *details;
  }
  throw Error(ErrorCategory::lume_api,
              "VM '" + vm + "'",
              "it is still being pulled (" + lume::describe(state) + ")",
              "wait for the pull to finish, then run the command again");
}

} // namespace

StepResult boot_vm(lume::LumeApi& lume,
                   const std::string& vm,
                   std::chrono::milliseconds timeout,
                   const util::ProgressCallback& progress) {
  const lume::VmDetails details = details_now(lume, vm);
  if (details.ssh_ready()) {
    return {false, "running at " + details.ip_address.value_or("?")};
  }
  bool started = false;
  if (details.status != lume::VmStatus::running) {
    lume::RunOptions run;
    run.no_display = true;
    lume.run(lume::VmRef{vm}, run).value_or_throw();
    started = true;
  }
  lume::WaitOptions wait;
  wait.what = "VM '" + vm + "' to be running with SSH reachable";
  wait.timeout = timeout;
  wait.first_interval = std::chrono::milliseconds(100);
  wait.progress = progress;
  const lume::VmState state =
      lume::wait_until(lume, lume::VmRef{vm}, lume::is_ssh_ready, wait).value_or_throw();
  return {started, std::string(started ? "booted, " : "") + lume::describe(state)};
}

std::unique_ptr<guest::GuestSession> connect_when_ready(const GuestConnector& connect,
                                                        std::chrono::milliseconds ssh_wait) {
  const auto deadline = std::chrono::steady_clock::now() + ssh_wait;
  for (;;) {
    try {
      return connect();
    } catch (const Error& error) {
      if (error.category() != ErrorCategory::guest ||
          std::chrono::steady_clock::now() >= deadline) {
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
}

StepResult stop_vm(lume::LumeApi& lume,
                   const std::string& vm,
                   std::chrono::milliseconds timeout,
                   const util::ProgressCallback& progress) {
  const lume::VmDetails details = details_now(lume, vm);
  if (details.status == lume::VmStatus::stopped) {
    return {false, "stopped"};
  }
  lume.stop(lume::VmRef{vm}).value_or_throw();
  lume::WaitOptions wait;
  wait.what = "VM '" + vm + "' to stop";
  wait.timeout = timeout;
  wait.first_interval = std::chrono::milliseconds(100);
  wait.progress = progress;
  lume::wait_until(lume, lume::VmRef{vm}, lume::is_stopped, wait).value_or_throw();
  return {true, "stopped"};
}

} // namespace lume_unlock::pipeline
