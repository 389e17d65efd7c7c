#pragma once
// The whole activation decision: kill switch, configuration, then the enablement guard.
#include "policy/config.hpp"

#include <optional>
#include <string_view>

namespace lume_unlock::policy {

/// What the caller learned from the file system; the policy does no I/O itself.
struct ActivationInput {
  Environment env;
  // Contents of the file named by env.enablement; nullopt when it could not be read. Ignored
  // when env.enablement is unset.
  std::optional<std::string_view> guard_text;
  // This process's resolved executable path; nullopt when it could not be resolved.
  std::optional<std::string_view> executable_path;
};

/// Decides whether the shim activates. Order: LUME_UNLOCK_DISABLE=1 wins over everything, then
/// the configuration (parse_config), then the guard (only when LUME_UNLOCK_ENABLEMENT is set).
ConfigResult decide(const ActivationInput& input) noexcept;

} // namespace lume_unlock::policy
