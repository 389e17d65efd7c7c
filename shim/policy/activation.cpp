#include "policy/activation.hpp"

#include "policy/guard.hpp"

namespace lume_unlock::policy {

ConfigResult decide(const ActivationInput& input) noexcept {
  ConfigResult result;
  if (kill_switch_set(input.env)) {
    result.reason = Reason::disabled;
    return result;
  }
  result = parse_config(input.env);
  if (result.reason != Reason::active || !input.env.enablement.has_value())
    return result;
  if (!input.guard_text.has_value()) {
    result.reason = Reason::enablement_unreadable;
  } else if (!input.executable_path.has_value() || input.executable_path->empty()) {
    result.reason = Reason::executable_unresolved;
  } else if (!guard_lists(*input.guard_text, *input.executable_path)) {
    result.reason = Reason::executable_not_enabled;
  }
  return result;
}

} // namespace lume_unlock::policy
