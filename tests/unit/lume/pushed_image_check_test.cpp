// lume::check_pushed_image: a manifest in the registry is the push of a Lume VM directory only
// when its NVRAM and disk slices hash to the VM's own bytes.
#include "lume/registry_image.hpp"
#include "oci/manifest.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

/// A VM directory and the manifest Lume would push for it, in two disk parts.
class PushedImage : public ::testing::Test {
protected:
  void SetUp() override {
    nvram = std::string(4096, 'n');
    disk = std::string(3000, 'x') + std::string(1000, '\0') + "tail";
    ASSERT_TRUE(util::write_file_atomic(dir.path() + "/nvram.bin", nvram).ok());
    ASSERT_TRUE(util::write_file_atomic(dir.path() + "/disk.img", disk).ok());
    manifest.media_type = oci::media_type::oci_manifest;
    manifest.config = oci::Descriptor{
        oci::media_type::lume_config, oci::Digest::of_bytes("{}"), 2, std::nullopt, {}};
    manifest.layers.push_back({oci::media_type::lume_nvram,
                               oci::Digest::of_bytes(nvram),
                               nvram.size(),
                               std::nullopt,
                               {{oci::annotation::title, "nvram.bin"}}});
    add_part(0, 0, 2048);
    add_part(1, 2048, disk.size() - 2048);
  }
  void add_part(int n, std::uint64_t offset, std::uint64_t size) {
    manifest.layers.push_back({oci::media_type::lume_disk,
                               oci::Digest::of_bytes("gz" + std::to_string(n)),
                               10,
                               std::nullopt,
                               {{oci::annotation::title, "disk.img.part." + std::to_string(n)},
                                {oci::annotation::lume_part_offset, std::to_string(offset)},
                                {oci::annotation::lume_uncompressed_size, std::to_string(size)},
                                {oci::annotation::lume_uncompressed_digest,
                                 "sha256:" + util::sha256_hex(disk.substr(offset, size))}}});
  }
  Result<PushedImageCheck> check() { return check_pushed_image(manifest, dir.path(), "push"); }

  test::TempDir dir{"pushed-image"};
  std::string nvram, disk;
  oci::Manifest manifest;
};

TEST_F(PushedImage, MatchesTheVmItWasPushedFrom) {
  auto result = check();
  ASSERT_TRUE(result.ok()) << result.error().message();
  EXPECT_TRUE(result.value().matches());
  EXPECT_EQ(result.value().disk_bytes_hashed, disk.size());
}

TEST_F(PushedImage, NamesEveryDifferingPart) {
  ASSERT_TRUE(util::write_file_atomic(dir.path() + "/disk.img", "y" + disk.substr(1)).ok());
  ASSERT_TRUE(util::write_file_atomic(dir.path() + "/nvram.bin", nvram + "!").ok());
  auto result = check();
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result.value().differences.size(), 2u);
  EXPECT_EQ(result.value().differences[0].rfind("nvram.bin: sha256:", 0), 0u);
  EXPECT_EQ(result.value().differences[1].rfind("disk.img.part.0 (offset 0, 2048 bytes): ", 0), 0u);
}

TEST_F(PushedImage, NoticesADiskThatGrewBeyondTheLayers) {
  ASSERT_TRUE(util::write_file_atomic(dir.path() + "/disk.img", disk + "more").ok());
  auto result = check();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value().differences,
            std::vector<std::string>{"disk.img: " + std::to_string(disk.size() + 4) +
                                     " bytes here, " + std::to_string(disk.size()) +
                                     " in the registry's layers"});
}

TEST_F(PushedImage, IsUnverifiableWithoutTheAnnotationsOrForOtherImages) {
  manifest.layers[1].annotations.erase(oci::annotation::lume_uncompressed_digest);
  auto missing = check();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().category(), ErrorCategory::registry);
  EXPECT_EQ(missing.error().why(),
            "the pushed image cannot be verified: layer 'disk.img.part.0' "
            "has no uncompressed size and digest");
  manifest.config->media_type = oci::media_type::oci_config;
  auto other = check();
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().why().find("it is not a Lume OCI image"), std::string::npos);
}

} // namespace
} // namespace lume_unlock::lume
