#pragma once
// The shim's configuration: the DESIGN §4.1 environment variables parsed into a profile.
#include "policy/reason.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace lume_unlock::policy {

inline constexpr std::uint64_t k_apple_family_first = 1001; // MTLGPUFamilyApple1
inline constexpr std::uint64_t k_apple_family_ceiling_limit = 1999;
inline constexpr std::uint64_t k_default_max_threadgroup_memory = 65536;

/// The variables as the process sees them; nullopt = unset. Callers read the environment. An empty
/// profile variable counts as unset; an empty LUME_UNLOCK_ENABLEMENT does not (it names no
/// readable file, so the shim stays inert rather than unlocking every process).
struct Environment {
  std::optional<std::string_view> apple_family_max;       // LUME_METAL_APPLE_FAMILY_MAX
  std::optional<std::string_view> max_threadgroup_memory; // LUME_METAL_MAX_THREADGROUP_MEMORY
  std::optional<std::string_view>
      recommended_working_set;                // LUME_METAL_RECOMMENDED_WORKING_SET_SIZE
  std::optional<std::string_view> enablement; // LUME_UNLOCK_ENABLEMENT
  std::optional<std::string_view> disable;    // LUME_UNLOCK_DISABLE
};

/// What an active shim answers.
struct Profile {
  std::uint64_t apple_family_max = 0; // supportsFamily: true for 1001..apple_family_max
  std::uint64_t max_threadgroup_memory = k_default_max_threadgroup_memory; // raised to at least
  std::optional<std::uint64_t> recommended_working_set; // raised to at least, only when set
  bool operator==(const Profile& other) const {
    return apple_family_max == other.apple_family_max &&
           max_threadgroup_memory == other.max_threadgroup_memory &&
           recommended_working_set == other.recommended_working_set;
  }
};

struct ConfigResult {
  Reason reason = Reason::apple_family_max_unset; // Reason::active when `profile` is usable
  Profile profile;
};

/// True only for exactly "1" (the kill switch).
bool kill_switch_set(const Environment& env) noexcept;

/// Parses the three profile variables (not the kill switch or the guard). The first problem found,
/// in table order, is the reason; the profile is meaningful only when the reason is `active`.
ConfigResult parse_config(const Environment& env) noexcept;

} // namespace lume_unlock::policy
