#include "policy/config.hpp"

#include "policy/number.hpp"

namespace lume_unlock::policy {
namespace {

/// Set and not empty: an empty variable counts as unset, as in the certified build (DESIGN §4.1).
bool given(const std::optional<std::string_view>& value) noexcept {
  return value.has_value() && !value->empty();
}

} // namespace

bool kill_switch_set(const Environment& env) noexcept {
  return env.disable.has_value() && *env.disable == "1";
}

ConfigResult parse_config(const Environment& env) noexcept {
  ConfigResult result;
  if (!given(env.apple_family_max)) {
    result.reason = Reason::apple_family_max_unset;
    return result;
  }
  const ParsedNumber ceiling = parse_unsigned(*env.apple_family_max);
  if (!ceiling.ok()) {
    result.reason = Reason::apple_family_max_malformed;
    return result;
  }
  if (ceiling.value < k_apple_family_first || ceiling.value > k_apple_family_ceiling_limit) {
    result.reason = Reason::apple_family_max_out_of_range;
    return result;
  }
  result.profile.apple_family_max = ceiling.value;

  if (given(env.max_threadgroup_memory)) {
    const ParsedNumber memory = parse_unsigned(*env.max_threadgroup_memory);
    if (!memory.ok()) {
      result.reason = Reason::max_threadgroup_memory_malformed;
      return result;
    }
    result.profile.max_threadgroup_memory = memory.value;
  }
  if (given(env.recommended_working_set)) {
    const ParsedNumber working_set = parse_unsigned(*env.recommended_working_set);
    if (!working_set.ok()) {
      result.reason = Reason::working_set_size_malformed;
      return result;
    }
    result.profile.recommended_working_set = working_set.value;
  }
  result.reason = Reason::active;
  return result;
}

} // namespace lume_unlock::policy
