#pragma once

#include "util/result.hpp"

#include <string>

namespace lume_unlock::guest {

/// Finds where a VM's guest answers SSH. The real implementation asks Lume (GET /lume/vms/<name>:
/// `ipAddress` once `status` is running and `sshAvailable` is true); tests may provide others.
class GuestAddressResolver {
public:
  virtual ~GuestAddressResolver() = default;
  /// The guest's host address, waiting for it to become ready within the implementation's
  /// deadline; errors name the VM and say what to do (category lume_api or guest).
  virtual Result<std::string> resolve(const std::string& vm) = 0;
};

} // namespace lume_unlock::guest
