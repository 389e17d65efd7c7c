#pragma once

#include "guest/session.hpp"
#include "lume/api.hpp"
#include "pipeline/plan.hpp"
#include "util/progress.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace lume_unlock::pipeline {

/// Opens the session to a VM's guest (the CLI's connect_vm_guest). Throws Error.
using GuestConnector = std::function<std::unique_ptr<guest::GuestSession>()>;

/// Starts the VM headless unless it runs already (`run` with noDisplay), then waits until Lume
/// reports it running with an IP address and SSH open. `changed` says whether it was started.
/// Throws Error (lume_api) when Lume refuses or the deadline passes.
StepResult boot_vm(lume::LumeApi& lume,
                   const std::string& vm,
                   std::chrono::milliseconds timeout,
                   const util::ProgressCallback& progress);

/// Connects with `connect`, retrying guest (SSH) failures for `ssh_wait`: Lume's sshAvailable
/// only means the port answered, sshd may still be starting. Other errors are rethrown at once.
std::unique_ptr<guest::GuestSession> connect_when_ready(const GuestConnector& connect,
                                                        std::chrono::milliseconds ssh_wait);

/// Stops the VM unless it is stopped already, and waits until Lume reports it stopped.
StepResult stop_vm(lume::LumeApi& lume,
                   const std::string& vm,
                   std::chrono::milliseconds timeout,
                   const util::ProgressCallback& progress);

} // namespace lume_unlock::pipeline
