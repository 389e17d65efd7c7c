#pragma once

#include "guest/session.hpp"
#include "lume/client.hpp"
#include "util/progress.hpp"

#include <chrono>
#include <functional>
#include <memory>

namespace lume_unlock::apply {

/// Finds a guest's address the way `lume ssh` does (reference lume-api.md §4.1): the VM must be
/// running with an `ipAddress` and `sshAvailable` (Lume's probe of port 22); waits for that
/// with the Lume client's polling, up to `timeout`.
class LumeGuestAddressResolver final : public guest::GuestAddressResolver {
public:
  explicit LumeGuestAddressResolver(lume::LumeApi& api,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(120),
                                    util::ProgressCallback progress = {});

  Result<std::string> resolve(const std::string& vm) override;

private:
  lume::LumeApi& m_api;
  std::chrono::milliseconds m_timeout;
  util::ProgressCallback m_progress;
};

/// Opens the session to a VM's guest (the CLI's connect_vm_guest). Throws Error.
using GuestConnector = std::function<std::unique_ptr<guest::GuestSession>()>;

/// Connects with `connect`, retrying guest (SSH) failures for `ssh_wait`: Lume's sshAvailable
/// only means the port answered, sshd may still be starting. Other errors are rethrown at once.
std::unique_ptr<guest::GuestSession> connect_when_ready(const GuestConnector& connect,
                                                        std::chrono::milliseconds ssh_wait);

} // namespace lume_unlock::apply
