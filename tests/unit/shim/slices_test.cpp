#include "policy/policy.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace lume_unlock::policy {
namespace {

void put_big_endian(std::vector<unsigned char>& out, std::uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i)
    out.push_back(static_cast<unsigned char>(value >> (8 * i)));
}

/// A fat header (FAT_MAGIC, or FAT_MAGIC_64 when wide) listing (cputype, cpusubtype) slices.
std::vector<unsigned char>
fat(std::initializer_list<std::pair<std::uint32_t, std::uint32_t>> slices, bool wide = false) {
  std::vector<unsigned char> out;
  put_big_endian(out, wide ? 0xcafebabf : 0xcafebabe, 4);
  put_big_endian(out, slices.size(), 4);
  for (const auto& [cputype, cpusubtype] : slices) {
    put_big_endian(out, cputype, 4);
    put_big_endian(out, cpusubtype, 4);
    put_big_endian(out, 0x4000, wide ? 8 : 4); // offset
    put_big_endian(out, 0x1000, wide ? 8 : 4); // size
    put_big_endian(out, 14, 4);                // align
    if (wide)
      put_big_endian(out, 0, 4); // reserved
  }
  return out;
}

constexpr std::uint32_t k_arm64 = 0x0100000c;
constexpr std::uint32_t k_x86_64 = 0x01000007;
constexpr std::uint32_t k_arm64e_ptrauth = 0x80000002; // arm64e with the versioned-ABI bit

TEST(Slices, AUniversalArm64AndArm64eFileQualifies) {
  for (bool wide : {false, true}) {
    const auto bytes = fat({{k_arm64, 0}, {k_arm64, k_arm64e_ptrauth}}, wide);
    EXPECT_TRUE(carries_arm64_and_arm64e(bytes.data(), bytes.size())) << wide;
    const auto plain_arm64e = fat({{k_arm64, 0}, {k_arm64, 2}}, wide);
    EXPECT_TRUE(carries_arm64_and_arm64e(plain_arm64e.data(), plain_arm64e.size())) << wide;
  }
}

TEST(Slices, AFileWithoutBothSlicesDoesNot) {
  const std::vector<std::vector<unsigned char>> files = {
      fat({{k_arm64, 0}}),
      fat({{k_arm64, k_arm64e_ptrauth}}),
      fat({{k_arm64, 0}, {k_x86_64, 3}}),
      fat({}),
      {0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0x00, 0x00, 0x01}, // a thin arm64 Mach-O (MH_MAGIC_64)
      {0x7f, 'E', 'L', 'F', 2, 1, 1, 0},                // the Linux .so
  };
  for (const auto& bytes : files)
    EXPECT_FALSE(carries_arm64_and_arm64e(bytes.data(), bytes.size()));
}

TEST(Slices, AHeaderCutShortProvesNothing) {
  const auto bytes = fat({{k_arm64, 0}, {k_arm64, 2}});
  EXPECT_FALSE(carries_arm64_and_arm64e(bytes.data(), bytes.size() - 20));
  EXPECT_FALSE(carries_arm64_and_arm64e(bytes.data(), 7));
  EXPECT_FALSE(carries_arm64_and_arm64e(nullptr, 0));
}

} // namespace
} // namespace lume_unlock::policy
