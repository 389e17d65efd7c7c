#include "policy/slices.hpp"

#include <cstdint>

namespace lume_unlock::policy {
namespace {

constexpr std::uint32_t k_fat_magic = 0xcafebabe;
constexpr std::uint32_t k_fat_magic_64 = 0xcafebabf;
constexpr std::uint32_t k_cpu_type_arm64 = 0x0100000c;   // CPU_TYPE_ARM | CPU_ARCH_ABI64
constexpr std::uint32_t k_cpu_subtype_mask = 0xff000000; // capability bits (arm64e's ptrauth ABI)
constexpr std::uint32_t k_cpu_subtype_arm64e = 2;
constexpr std::size_t k_fat_arch_size = 20;    // cputype, cpusubtype, offset, size, align
constexpr std::size_t k_fat_arch_64_size = 32; // ... 64-bit offset and size, reserved

std::uint32_t big_endian_at(const unsigned char* p) noexcept {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

} // namespace

bool carries_arm64_and_arm64e(const unsigned char* bytes, std::size_t size) noexcept {
  if (bytes == nullptr || size < 8)
    return false;
  const std::uint32_t magic = big_endian_at(bytes);
  if (magic != k_fat_magic && magic != k_fat_magic_64)
    return false;
  const std::size_t entry = magic == k_fat_magic ? k_fat_arch_size : k_fat_arch_64_size;
  const std::uint32_t count = big_endian_at(bytes + 4);
  bool arm64 = false;
  bool arm64e = false;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t at = 8 + static_cast<std::size_t>(i) * entry;
    if (at + 8 > size)
      return false; // a header cut short proves nothing
    if (big_endian_at(bytes + at) != k_cpu_type_arm64)
      continue;
    const std::uint32_t subtype = big_endian_at(bytes + at + 4) & ~k_cpu_subtype_mask;
    if (subtype == k_cpu_subtype_arm64e)
      arm64e = true;
    else
      arm64 = true;
  }
  return arm64 && arm64e;
}

} // namespace lume_unlock::policy
