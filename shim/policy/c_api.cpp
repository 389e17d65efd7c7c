#include "policy/c_api.h"

#include "policy/policy.hpp"

namespace {

using lume_unlock::policy::Reason;

std::optional<std::string_view> view(const lume_unlock_text& text) noexcept {
  if (text.data == nullptr)
    return std::nullopt;
  return std::string_view(text.data, text.size);
}

} // namespace

extern "C" lume_unlock_decision
lume_unlock_policy_decide(const lume_unlock_activation_input* input) {
  lume_unlock_decision decision{};
  decision.reason = static_cast<std::uint32_t>(Reason::apple_family_max_unset);
  if (input == nullptr)
    return decision;
  lume_unlock::policy::ActivationInput in;
  in.env.apple_family_max = view(input->apple_family_max);
  in.env.max_threadgroup_memory = view(input->max_threadgroup_memory);
  in.env.recommended_working_set = view(input->recommended_working_set);
  in.env.enablement = view(input->enablement);
  in.env.disable = view(input->disable);
  in.guard_text = view(input->guard_text);
  in.executable_path = view(input->executable_path);
  const lume_unlock::policy::ConfigResult result = lume_unlock::policy::decide(in);
  decision.reason = static_cast<std::uint32_t>(result.reason);
  decision.profile.apple_family_max = result.profile.apple_family_max;
  decision.profile.max_threadgroup_memory = result.profile.max_threadgroup_memory;
  decision.profile.raise_working_set = result.profile.recommended_working_set.has_value() ? 1 : 0;
  decision.profile.recommended_working_set = result.profile.recommended_working_set.value_or(0);
  return decision;
}

extern "C" const char* lume_unlock_policy_reason_name(std::uint32_t reason) {
  return lume_unlock::policy::reason_name(static_cast<Reason>(reason));
}

extern "C" const char* lume_unlock_policy_reason_description(std::uint32_t reason) {
  return lume_unlock::policy::reason_description(static_cast<Reason>(reason));
}

extern "C" int lume_unlock_policy_family_forced_true(const lume_unlock_profile* profile,
                                                     std::uint64_t family) {
  lume_unlock::policy::Profile p;
  p.apple_family_max = profile->apple_family_max;
  return lume_unlock::policy::family_forced_true(p, family) ? 1 : 0;
}

extern "C" std::uint64_t lume_unlock_policy_raise_limit(std::uint64_t original,
                                                        std::uint64_t configured) {
  return lume_unlock::policy::raise_limit(original, configured);
}

extern "C" int lume_unlock_policy_carries_arm64_and_arm64e(const unsigned char* bytes,
                                                           std::size_t size) {
  return lume_unlock::policy::carries_arm64_and_arm64e(bytes, size) ? 1 : 0;
}
