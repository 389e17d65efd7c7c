#include "oci/hashing_read_ahead.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::oci {
namespace {

std::string pattern(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<char>((i * 131 + i / 7) & 0xff);
  }
  return bytes;
}

/// Reads the range the way libcurl does, in small pieces, until read() says 0.
std::string drain(HashingReadAhead& reader, std::size_t piece) {
  std::string out;
  std::string buffer(piece, '\0');
  while (true) {
    auto n = reader.read(buffer.data(), buffer.size());
    EXPECT_TRUE(n.ok());
    if (!n.ok() || n.value() == 0) {
      return out;
    }
    out.append(buffer.data(), n.value());
  }
}

TEST(HashingReadAhead, HandsOverEveryByteInOrderAndHashesWhatItHandsOver) {
  const std::string bytes = pattern(3 * 1024 * 1024 + 12345);
  const UploadSource source = bytes_upload_source(bytes);
  util::Sha256 hasher;
  {
    HashingReadAhead reader(source, &hasher);
    reader.start(0, 1024 * 1024 + 5); // two ranges, as PATCH chunks send them
    std::string sent = drain(reader, 16 * 1024);
    reader.start(1024 * 1024 + 5, bytes.size());
    sent += drain(reader, 7000);
    reader.stop();
    EXPECT_EQ(sent, bytes);
  }
  EXPECT_EQ(hasher.finish_hex(), util::sha256_hex(bytes));
}

TEST(HashingReadAhead, ARestartedRangeIsSentAgainButHashedOnce) {
  const std::string bytes = pattern(2 * 1024 * 1024);
  const UploadSource source = bytes_upload_source(bytes);
  util::Sha256 hasher;
  {
    HashingReadAhead reader(source, &hasher);
    reader.start(0, bytes.size());
    std::string first(100000, '\0');
    ASSERT_TRUE(reader.read(first.data(), first.size()).ok()); // then the request fails
    reader.start(0, bytes.size());                             // and is sent again
    EXPECT_EQ(drain(reader, 65536), bytes);
  }
  EXPECT_EQ(hasher.finish_hex(), util::sha256_hex(bytes));
}

TEST(HashingReadAhead, AReadErrorReachesTheReader) {
  UploadSource source;
  source.size = 1000;
  source.read_at = [](std::uint64_t, char*, std::size_t) -> Result<std::size_t> {
    return Error(ErrorCategory::failure, "cannot read 'x'", "disk on fire");
  };
  HashingReadAhead reader(source, nullptr);
  reader.start(0, source.size);
  char buffer[64];
  auto n = reader.read(buffer, sizeof buffer);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().message(), "cannot read 'x': disk on fire");
}

} // namespace
} // namespace lume_unlock::oci
