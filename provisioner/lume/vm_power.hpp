#pragma once

#include "lume/api.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace lume_unlock::lume {

/// What a power change did: whether the VM had to change state, and one line for the user.
struct VmTransition {
  bool changed = true;
  std::string summary;
};

/// Starts the VM headless unless it runs already (`run` with noDisplay and `shared` as its
/// sharedDirectories), then waits until Lume reports it running with an IP address and SSH
/// open. `changed` says whether it was started. A VM that runs already keeps the shares it was
/// started with (Lume reports none, so the caller checks in the guest). Fails (lume_api) when
/// Lume refuses, the VM is still being pulled, or the deadline passes.
Result<VmTransition> boot_vm(LumeApi& lume,
                             const std::string& vm,
                             std::chrono::milliseconds timeout,
                             const util::ProgressCallback& progress,
                             const std::vector<SharedDirectory>& shared = {});

/// Stops the VM unless it is stopped already, and waits until Lume reports it stopped.
Result<VmTransition> stop_vm(LumeApi& lume,
                             const std::string& vm,
                             std::chrono::milliseconds timeout,
                             const util::ProgressCallback& progress);

} // namespace lume_unlock::lume
