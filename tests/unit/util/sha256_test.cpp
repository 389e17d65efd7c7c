#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace lume_unlock::util {
namespace {

// Test vectors from FIPS 180-2 / NIST CSRC examples.
TEST(Sha256, EmptyInput) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Abc) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, TwoBlockMessage) {
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, OneMillionAsStreamedInUnevenChunks) {
  Sha256 hasher;
  const std::string chunk(999, 'a');
  std::size_t fed = 0;
  while (fed + chunk.size() <= 1000000) {
    hasher.update(chunk);
    fed += chunk.size();
  }
  hasher.update(std::string(1000000 - fed, 'a'));
  EXPECT_EQ(hasher.size(), 1000000u);
  EXPECT_EQ(hasher.finish_hex(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, ChunkingDoesNotChangeTheDigest) {
  std::string data;
  for (int i = 0; i < 100000; ++i) {
    data.push_back(static_cast<char>(i * 7 + 3));
  }
  Sha256 byte_by_byte;
  for (char c : data) {
    byte_by_byte.update(&c, 1);
  }
  EXPECT_EQ(byte_by_byte.finish_hex(), sha256_hex(data));
}

TEST(Sha256, FileDigestEqualsInMemoryDigest) {
  std::string path = ::testing::TempDir() + "/sha256_file_test.bin";
  std::string data(3 * 1024 * 1024 + 17, 'x'); // more than one 1 MiB read
  std::ofstream(path, std::ios::binary) << data;
  auto digest = sha256_file_hex(path);
  ASSERT_TRUE(digest.ok()) << digest.error().message();
  EXPECT_EQ(digest.value(), sha256_hex(data));
  std::remove(path.c_str());
}

TEST(Sha256, MissingFileNamesThePath) {
  auto digest = sha256_file_hex("/nonexistent/dir/file");
  ASSERT_FALSE(digest.ok());
  EXPECT_EQ(digest.error().message(),
            "cannot read '/nonexistent/dir/file': No such file or directory");
}

TEST(Sha256, RecognisesHexDigests) {
  EXPECT_TRUE(is_sha256_hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
  EXPECT_FALSE(is_sha256_hex("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"));
  EXPECT_FALSE(is_sha256_hex("e3b0c442"));
  EXPECT_FALSE(is_sha256_hex("g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
}

} // namespace
} // namespace lume_unlock::util
