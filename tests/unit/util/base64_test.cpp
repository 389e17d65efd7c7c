#include "util/encoding.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

TEST(Base64, EncodesRfc4648Vectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode("user:p@ss"), "dXNlcjpwQHNz");
}

TEST(Base64, DecodesWithAndWithoutPadding) {
  EXPECT_EQ(base64_decode("Zm9vYg=="), "foob");
  EXPECT_EQ(base64_decode("Zm9vYg"), "foob");
  EXPECT_EQ(base64_decode("Zm9vYmFy"), "foobar");
  EXPECT_EQ(base64_decode(""), "");
  const std::string binary("\x00\xff\x10\x80", 4);
  EXPECT_EQ(base64_decode(base64_encode(binary)), binary);
}

TEST(Base64, RejectsForeignCharactersAndTruncatedGroups) {
  EXPECT_EQ(base64_decode("Zm9v!"), std::nullopt);
  EXPECT_EQ(base64_decode("Z"), std::nullopt);
  EXPECT_EQ(base64_decode("Zm 9v"), std::nullopt);
}

} // namespace
} // namespace lume_unlock::util
