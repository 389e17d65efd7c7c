#include "oci/hashing_file_writer.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::oci {
namespace {

TEST(HashingFileWriter, WritesAndHashesEveryByteInOrderBeforeTheCommit) {
  test::TempDir dir;
  std::string bytes(5 * 1024 * 1024 + 321, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>((i * 17 + i / 1000) & 0xff);
  }
  auto file = util::AtomicFile::create(dir / "blob");
  ASSERT_TRUE(file.ok()) << file.error().message();
  HashingFileWriter writer(file.value());
  // Pieces of odd sizes, as a TLS connection delivers them.
  for (std::size_t at = 0; at < bytes.size(); at += 16411) {
    ASSERT_TRUE(writer.push(std::string_view(bytes).substr(at, 16411)));
  }
  auto hex = writer.finish();
  ASSERT_TRUE(hex.ok()) << hex.error().message();
  EXPECT_EQ(hex.value(), util::sha256_hex(bytes));
  ASSERT_TRUE(file.value().commit().ok());
  auto back = util::read_file(dir / "blob");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back.value(), bytes);
}

TEST(HashingFileWriter, AnAbandonedWriterStopsWithoutCommitting) {
  test::TempDir dir;
  auto file = util::AtomicFile::create(dir / "blob");
  ASSERT_TRUE(file.ok());
  {
    HashingFileWriter writer(file.value());
    ASSERT_TRUE(writer.push(std::string(3 * 1024 * 1024, 'x')));
  } // the transfer failed: no finish(), no commit
  EXPECT_FALSE(util::read_file(dir / "blob").ok());
}

} // namespace
} // namespace lume_unlock::oci
