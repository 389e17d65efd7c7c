// Which shim ran, named from the record: the certified digests are those of
// trycua/cua b296ec9c libs/lume/metal-capability-shim/Release/SHA256SUMS (docs/sources.md).
#include "provenance/shim_identity.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::provenance {
namespace {

const std::string k_certified_arm64 =
    "515b9d84ab67e86d959282e95c194a5ad8a947261514b947d6f7483c57797b31";
const std::string k_certified_arm64e =
    "62504be341ed74191eab22f19e21d99b2afbe6cc029902c760578ffbbd0588cb";

ShimInfo external_shim(const std::string& digest) {
  ShimInfo shim;
  shim.files = std::vector<FileHash>{{"/guest/shim/" + digest + "/x.dylib", digest}};
  shim.external = FileHash{"dist/LumeMetalCapabilities-arm64.dylib", digest};
  return shim;
}

TEST(ShimIdentity, TheCertifiedDigestsAreTheTwoDylibsOfSha256Sums) {
  ASSERT_EQ(certified_builds().size(), 2u);
  EXPECT_EQ(certified_build(k_certified_arm64)->file,
            std::string("LumeMetalCapabilities-arm64.dylib"));
  EXPECT_EQ(certified_build(k_certified_arm64e)->file,
            std::string("LumeMetalCapabilities-arm64e.dylib"));
  // The probe and the source archive of the same SHA256SUMS are not shims.
  EXPECT_FALSE(certified_build("6e0f26c6c138b4c31379fb659cb5748d98db993d4d19c8db0f0e4a44ed714396"));
  EXPECT_FALSE(certified_build(std::string(64, 'a')));
}

TEST(ShimIdentity, AnExternalDylibIsCertifiedOnlyByItsExactDigest) {
  EXPECT_EQ(shim_that_ran(external_shim(k_certified_arm64)), "certified upstream build 515b9d84…");
  EXPECT_EQ(shim_that_ran(external_shim(k_certified_arm64e)), "certified upstream build 62504be3…");
  std::string near = k_certified_arm64;
  near.back() = '0';
  EXPECT_EQ(shim_that_ran(external_shim(near)), "external shim " + near);
}

TEST(ShimIdentity, OurShimIsNamedByItsDylibsDigestAndNothingIsInvented) {
  ShimInfo ours;
  ours.files =
      std::vector<FileHash>{{"/guest/shim/b/liblume-unlock-shim.dylib", std::string(64, 'b')},
                            {"/guest/bin/lume-unlock-probe", std::string(64, 'c')}};
  EXPECT_EQ(shim_that_ran(ours), "lume-unlock shim " + std::string(64, 'b'));
  // A record of our shim whose file happens to have a certified digest is still ours.
  ours.files->front().sha256 = k_certified_arm64;
  EXPECT_EQ(shim_that_ran(ours), "lume-unlock shim " + k_certified_arm64);
  EXPECT_EQ(shim_that_ran(ShimInfo{}), "");
}

} // namespace
} // namespace lume_unlock::provenance
