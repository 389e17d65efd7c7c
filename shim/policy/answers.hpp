#pragma once
// The answers an active shim gives (DESIGN §4.1). Called on every hooked Metal query: no
// allocation, no branches beyond the rule itself.
#include "policy/config.hpp"

#include <cstdint>

namespace lume_unlock::policy {

/// True when `supportsFamily:family` is answered true without asking the device: Apple families
/// 1001..profile.apple_family_max. Every other code (Mac 2001-2002, Common 3001-3003,
/// MacCatalyst 4001-4002, Metal 5001-5002, Apple above the ceiling, unknown) gets the device's
/// own answer.
inline bool family_forced_true(const Profile& profile, std::uint64_t family) noexcept {
  return family >= k_apple_family_first && family <= profile.apple_family_max;
}

/// A limit is raised to at least `configured`, never lowered.
inline std::uint64_t raise_limit(std::uint64_t original, std::uint64_t configured) noexcept {
  return original < configured ? configured : original;
}

} // namespace lume_unlock::policy
