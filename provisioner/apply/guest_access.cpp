#include "apply/guest_access.hpp"

#include "lume/client.hpp"
#include "util/error.hpp"

#include <thread>

namespace lume_unlock::apply {

LumeGuestAddressResolver::LumeGuestAddressResolver(lume::LumeApi& api,
                                                   std::chrono::milliseconds timeout,
                                                   util::ProgressCallback progress)
    : m_api(api), m_timeout(timeout), m_progress(std::move(progress)) {}

Result<std::string> LumeGuestAddressResolver::resolve(const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(const lume::VmState current, m_api.get(lume::VmRef{vm}));
  if (const auto* details = std::get_if<lume::VmDetails>(&current)) {
    if (details->status != lume::VmStatus::running) {
      return Error(ErrorCategory::lume_api,
                   "guest of VM '" + vm + "'",
                   "the VM is " + details->status_text + ", not running",
                   "start it with 'lume run " + vm + " --no-display' (or 'lume-unlock create " +
                       vm + "', which boots it)");
    }
  }
  lume::WaitOptions options;
  options.what = "VM '" + vm + "' to have an IP address and SSH";
  options.timeout = m_timeout;
  options.progress = m_progress;
  LUME_UNLOCK_TRY_ASSIGN(const auto& ready,
                         lume::wait_until(m_api, lume::VmRef{vm}, lume::is_ssh_ready, options));
  return *std::get<lume::VmDetails>(ready).ip_address;
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

} // namespace lume_unlock::apply
