#include "fetch/ordered_hasher.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::fetch {
namespace {

std::string bytes_of(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<char>((i * 131) ^ (i >> 9));
  }
  return bytes;
}

TEST(OrderedHasher, HashesEveryByteInOrderAsThePrefixGrows) {
  test::TempDir dir;
  const std::string path = dir.path() + "/f";
  const std::string bytes = bytes_of((3u << 20) + 12345);
  ASSERT_TRUE(util::write_file_atomic(path, bytes).ok());
  OrderedHasher hasher(path);
  EXPECT_FALSE(hasher.step(0).value()) << "nothing finished yet";
  ASSERT_TRUE(hasher.catch_up(1000).ok());
  EXPECT_EQ(hasher.hashed(), 1000u);
  ASSERT_TRUE(hasher.catch_up(999).ok()) << "a prefix never shrinks what was hashed";
  EXPECT_EQ(hasher.hashed(), 1000u);
  ASSERT_TRUE(hasher.step(bytes.size()).value());
  EXPECT_EQ(hasher.hashed(), 1000u + (1u << 20)) << "one block a step";
  ASSERT_TRUE(hasher.catch_up(bytes.size()).ok());
  EXPECT_EQ(hasher.finish_hex(), util::sha256_hex(bytes));
}

TEST(OrderedHasher, AFileShorterThanItsChunksClaimIsAnError) {
  test::TempDir dir;
  const std::string path = dir.path() + "/f";
  ASSERT_TRUE(util::write_file_atomic(path, "short").ok());
  OrderedHasher hasher(path);
  const auto status = hasher.catch_up(100);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            "cannot hash the partial download '" + path +
                "': it ends at byte 5, before the 100 bytes its chunks claim");
}

} // namespace
} // namespace lume_unlock::fetch
