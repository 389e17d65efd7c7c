#pragma once

#include "guest/session.hpp"

#include <chrono>
#include <functional>
#include <memory>

namespace lume_unlock::apply {

/// Opens the session to a VM's guest (the CLI's connect_vm_guest). Throws Error.
using GuestConnector = std::function<std::unique_ptr<guest::GuestSession>()>;

/// Connects with `connect`, retrying guest (SSH) failures for `ssh_wait`: Lume's sshAvailable
/// only means the port answered, sshd may still be starting. Other errors are rethrown at once.
std::unique_ptr<guest::GuestSession> connect_when_ready(const GuestConnector& connect,
                                                        std::chrono::milliseconds ssh_wait);

} // namespace lume_unlock::apply
