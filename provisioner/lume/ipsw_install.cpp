#include "lume/ipsw_install.hpp"

#include "lume/wait.hpp"

namespace lume_unlock::lume {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

} // namespace

Result<VmTransition> install_from_ipsw(LumeApi& lume, const IpswInstallRequest& request) {
  lume::CreateRequest create;
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

  lume::WaitClock& clock = request.clock != nullptr ? *request.clock : lume::system_wait_clock();
  const auto deadline = clock.now() + request.timeout;
  const auto remaining = [&] {
    return std::max(milliseconds(0), duration_cast<milliseconds>(deadline - clock.now()));
  };
  lume::WaitOptions wait;
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
    lume::WaitOptions settle = wait;
    settle.what = "the unattended setup of '" + request.vm + "' to stay finished";
    settle.timeout = std::min(request.settle, remaining());
    auto restarted = lume::wait_until(
        lume,
        lume::VmRef{request.vm},
        [](const lume::VmState& state) { return !lume::is_stopped(state); },
        settle);
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
