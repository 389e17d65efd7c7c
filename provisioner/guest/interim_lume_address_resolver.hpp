#pragma once

// INTERIM (issue 5): a minimal stand-in for the Lume client, written while provisioner/lume/ was
// being built in parallel. On merge, replace this file pair with a GuestAddressResolver backed by
// the real Lume client and delete it.

#include "guest/address_resolver.hpp"

#include <chrono>
#include <string>

namespace lume_unlock::guest {

/// Polls GET <lume_url>/lume/vms/<vm> until `status` is "running", `ipAddress` is set and
/// `sshAvailable` is true, or `wait` has passed. A VM that is not running fails at once.
class InterimLumeAddressResolver final : public GuestAddressResolver {
public:
  explicit InterimLumeAddressResolver(std::string lume_url,
                                      std::chrono::milliseconds wait = std::chrono::seconds(60),
                                      std::chrono::milliseconds poll = std::chrono::milliseconds(500));
  Result<std::string> resolve(const std::string& vm) override;

private:
  std::string m_lume_url;
  std::chrono::milliseconds m_wait;
  std::chrono::milliseconds m_poll;
};

} // namespace lume_unlock::guest
