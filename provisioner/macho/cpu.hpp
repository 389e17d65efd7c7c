#pragma once

#include <cstdint>
#include <string>

namespace lume_unlock::macho {

inline constexpr std::uint32_t k_cpu_type_x86 = 7;
inline constexpr std::uint32_t k_cpu_type_arm = 12;
inline constexpr std::uint32_t k_cpu_abi64 = 0x01000000;
inline constexpr std::uint32_t k_cpu_type_x86_64 = k_cpu_type_x86 | k_cpu_abi64;
inline constexpr std::uint32_t k_cpu_type_arm64 = k_cpu_type_arm | k_cpu_abi64;
/// The high byte of a cpusubtype holds capability bits (CPU_SUBTYPE_MASK), not the subtype:
/// arm64e binaries say 0x80000002 (the pointer-authentication ABI bit), x86_64 ones 0x80000003.
inline constexpr std::uint32_t k_cpu_subtype_capability_mask = 0xff000000;
inline constexpr std::uint32_t k_cpu_subtype_arm64e = 2;
inline constexpr std::uint32_t k_cpu_subtype_x86_64_h = 8;

/// The name lipo gives a slice: "arm64", "arm64e", "x86_64", "x86_64h", "i386", "arm", or
/// "cputype 0x…/cpusubtype 0x…" for anything else.
std::string arch_name(std::uint32_t cputype, std::uint32_t cpusubtype);

} // namespace lume_unlock::macho
