#include "policy/policy.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::policy {
namespace {

Profile ceiling(std::uint64_t max) {
  Profile p;
  p.apple_family_max = max;
  return p;
}

TEST(FamilyForcedTrue, AppleFamiliesUpToTheCeilingOnly) {
  const Profile p = ceiling(1009);
  EXPECT_FALSE(family_forced_true(p, 1000));
  for (std::uint64_t f = 1001; f <= 1009; ++f)
    EXPECT_TRUE(family_forced_true(p, f)) << f;
  EXPECT_FALSE(family_forced_true(p, 1010));
  EXPECT_FALSE(family_forced_true(p, 1999));
}

TEST(FamilyForcedTrue, EveryNonAppleFamilyKeepsTheDevicesAnswer) {
  // Mac, Common, MacCatalyst, Metal3/Metal4 and unknown codes are never forced, whatever the
  // ceiling: Metal3 (5001) would break MLX.
  const std::uint64_t others[] = {
      0, 1, 999, 2000, 2001, 2002, 3001, 3002, 3003, 4001, 4002, 5001, 5002, 6000, UINT64_MAX};
  for (const std::uint64_t ceiling_value : {1001u, 1009u, 1999u}) {
    for (const std::uint64_t f : others) {
      EXPECT_FALSE(family_forced_true(ceiling(ceiling_value), f)) << f << " at " << ceiling_value;
    }
  }
}

TEST(RaiseLimit, RaisesButNeverLowers) {
  EXPECT_EQ(raise_limit(32768, 65536), 65536u);
  EXPECT_EQ(raise_limit(65536, 32768), 65536u);
  EXPECT_EQ(raise_limit(32768, 32768), 32768u);
  EXPECT_EQ(raise_limit(11453250000u, 0), 11453250000u);
  EXPECT_EQ(raise_limit(0, UINT64_MAX), UINT64_MAX);
}

} // namespace
} // namespace lume_unlock::policy
