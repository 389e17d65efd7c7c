#include "macho/code_signature.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace lume_unlock::macho {
namespace {

using ::testing::HasSubstr;

std::string be32(std::uint32_t value) {
  std::string bytes(4, '\0');
  for (int i = 0; i < 4; ++i) {
    bytes[i] = static_cast<char>((value >> (8 * (3 - i))) & 0xff);
  }
  return bytes;
}

std::string blob(std::uint32_t magic, const std::string& body) {
  return be32(magic) + be32(static_cast<std::uint32_t>(8 + body.size())) + body;
}

std::string code_directory(std::uint32_t flags) {
  return blob(0xfade0c02, be32(0x20400) + be32(flags) + std::string(28, '\0'));
}

/// A SuperBlob of (slot, blob) pairs, laid out as codesign does.
std::string superblob(const std::vector<std::pair<std::uint32_t, std::string>>& blobs) {
  const std::uint32_t header = static_cast<std::uint32_t>(12 + 8 * blobs.size());
  std::string index;
  std::string body;
  for (const auto& [slot, bytes] : blobs) {
    index += be32(slot) + be32(header + static_cast<std::uint32_t>(body.size()));
    body += bytes;
  }
  return be32(0xfade0cc0) + be32(header + static_cast<std::uint32_t>(body.size())) +
         be32(static_cast<std::uint32_t>(blobs.size())) + index + body;
}

Result<CodeSignature> read(const std::string& bytes) {
  return read_code_signature(read_from_bytes(bytes), 0, bytes.size());
}

std::string error_of(const std::string& bytes) {
  auto signature = read(bytes);
  EXPECT_FALSE(signature.ok());
  return signature.ok() ? "" : signature.error().why();
}

TEST(MachoCodeSignature, ReadsTheFlagsAndTheEntitlementsWhateverTheSlotOrder) {
  const std::string plist = "<dict><key>com.apple.security.cs.disable-library-validation</key>"
                            "<true/></dict>";
  auto signature = read(superblob(
      {{5, blob(0xfade7171, plist)}, {2, blob(0xfade0c01, "")}, {0, code_directory(0x12002)}}));
  ASSERT_TRUE(signature.ok()) << signature.error().message();
  EXPECT_EQ(signature.value().flags, 0x12002u);
  EXPECT_TRUE(signature.value().hardened_runtime());
  EXPECT_TRUE(signature.value().ad_hoc());
  EXPECT_TRUE(signature.value().has_entitlements);
  EXPECT_TRUE(signature.value().disable_library_validation);
  EXPECT_FALSE(signature.value().allow_dyld_environment);
  EXPECT_FALSE(signature.value().library_validation());
}

TEST(MachoCodeSignature, MalformedSuperBlobsAreErrors) {
  EXPECT_EQ(error_of("short"), "LC_CODE_SIGNATURE names 5 bytes, too few for a SuperBlob");
  EXPECT_EQ(error_of(superblob({{2, blob(0xfade0c01, "")}})), "the SuperBlob has no CodeDirectory");
  EXPECT_EQ(error_of(superblob({{0, code_directory(0)}, {0, code_directory(2)}})),
            "slot 0 appears twice");
  std::string bad_magic = superblob({{0, code_directory(0)}});
  bad_magic[0] = 'x';
  EXPECT_EQ(error_of(bad_magic).rfind("the SuperBlob has magic", 0), 0u);

  std::string many = superblob({{0, code_directory(0)}});
  many.replace(8, 4, be32(65));
  EXPECT_EQ(error_of(many), "the SuperBlob claims 65 blobs");
  std::string long_blob = superblob({{0, code_directory(0)}});
  long_blob.replace(4, 4, be32(1u << 30));
  EXPECT_THAT(error_of(long_blob), HasSubstr("does not fit the"));
  std::string outside = superblob({{0, code_directory(0)}});
  outside.replace(16, 4, be32(0xfffffffc)); // the CodeDirectory's offset
  EXPECT_THAT(error_of(outside), HasSubstr("lies outside the"));
  std::string cd_too_long = superblob({{0, code_directory(0)}});
  cd_too_long.replace(20 + 4, 4, be32(4096)); // the CodeDirectory's own length
  EXPECT_EQ(error_of(cd_too_long), "the CodeDirectory length 4096 does not fit the SuperBlob");
  std::string wrong_kind = superblob({{0, blob(0xfade7171, "")}});
  EXPECT_EQ(error_of(wrong_kind), "the CodeDirectory has magic 0xfade7171, not 0xfade0c02");
}

TEST(MachoCodeSignature, EntitlementsLargerThanTheBoundAreRefusedUnread) {
  std::size_t requested = 0;
  const std::string bytes = superblob(
      {{0, code_directory(0)}, {5, blob(0xfade7171, std::string(k_max_entitlements + 1, ' '))}});
  const ReadAt inner = read_from_bytes(bytes);
  const ReadAt counting = [&](std::uint64_t offset, std::size_t length) {
    requested += length;
    return inner(offset, length);
  };
  auto signature = read_code_signature(counting, 0, bytes.size());
  ASSERT_FALSE(signature.ok());
  EXPECT_EQ(signature.error().why(),
            "the entitlements are 1048577 bytes, more than the 1048576 read");
  EXPECT_LT(requested, 100u);
}

} // namespace
} // namespace lume_unlock::macho
