#include "guest_address_resolver.hpp"

#include "lume/wait.hpp"

namespace lume_unlock::lume {

LumeGuestAddressResolver::LumeGuestAddressResolver(LumeApi& api,
                                                   std::chrono::milliseconds timeout,
                                                   util::ProgressCallback progress)
    : m_api(api), m_timeout(timeout), m_progress(std::move(progress)) {}

Result<std::string> LumeGuestAddressResolver::resolve(const std::string& vm) {
  auto current = m_api.get(VmRef{vm});
  if (!current) {
    return current.error();
  }
  if (const auto* details = std::get_if<VmDetails>(&current.value())) {
    if (details->status != VmStatus::running) {
      return Error(ErrorCategory::lume_api,
                   "guest of VM '" + vm + "'",
                   "the VM is " + details->status_text + ", not running",
                   "start it with 'lume run " + vm + " --no-display' (or 'lume-unlock create " +
                       vm + "', which boots it)");
    }
  }
  WaitOptions options;
  options.what = "VM '" + vm + "' to have an IP address and SSH";
  options.timeout = m_timeout;
  options.progress = m_progress;
  auto ready = wait_until(m_api, VmRef{vm}, is_ssh_ready, options);
  if (!ready) {
    return ready.error();
  }
  return *std::get<VmDetails>(ready.value()).ip_address;
}

} // namespace lume_unlock::lume
