#include "oci/reference.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::oci {
namespace {

const std::string k_hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

TEST(Digest, ParsesSha256AndPrintsItBack) {
  auto d = Digest::parse("sha256:" + k_hex);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d.value().hex(), k_hex);
  EXPECT_EQ(d.value().str(), "sha256:" + k_hex);
  EXPECT_EQ(std::string(Digest::algorithm()), "sha256");
}

TEST(Digest, OfBytesHashesTheBytes) {
  EXPECT_EQ(Digest::of_bytes("").str(), "sha256:" + k_hex);
  EXPECT_EQ(Digest::of_bytes("abc").hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_NE(Digest::of_bytes("a"), Digest::of_bytes("b"));
}

TEST(Digest, RejectsEveryMalformedDigestWithTheRuleBroken) {
  struct Case {
    const char* name;
    std::string input;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"empty", "", "invalid digest '': the digest is empty"},
      {"no algorithm",
       k_hex,
       "invalid digest '" + k_hex + "': missing the algorithm prefix 'sha256:'"},
      {"sha512",
       "sha512:abcd",
       "invalid digest 'sha512:abcd': unsupported algorithm 'sha512' (only sha256)"},
      {"upper-case algorithm",
       "SHA256:" + k_hex,
       "invalid digest 'SHA256:" + k_hex + "': unsupported algorithm 'SHA256' (only sha256)"},
      {"short",
       "sha256:short",
       "invalid digest 'sha256:short': expected 64 hex characters after 'sha256:', got 5"},
      {"long",
       "sha256:" + k_hex + "0",
       "invalid digest 'sha256:" + k_hex +
           "0': expected 64 hex characters after 'sha256:', got 65"},
      {"upper-case hex",
       "sha256:" + std::string(64, 'A'),
       "invalid digest 'sha256:" + std::string(64, 'A') +
           "': the hex part may only contain lower-case hex characters [0-9a-f]"},
      {"non-hex",
       "sha256:" + std::string(63, 'a') + "g",
       "invalid digest 'sha256:" + std::string(63, 'a') +
           "g': the hex part may only contain lower-case hex characters [0-9a-f]"},
  };
  for (const auto& c : cases) {
    auto d = Digest::parse(c.input);
    ASSERT_FALSE(d.ok()) << c.name;
    EXPECT_EQ(d.error().message(), c.message) << c.name;
    EXPECT_EQ(d.error().category(), ErrorCategory::usage) << c.name;
  }
}

TEST(Digest, FromSha256HexChecksTheHex) {
  EXPECT_TRUE(Digest::from_sha256_hex(k_hex).ok());
  EXPECT_EQ(Digest::from_sha256_hex("xyz").error().message(),
            "invalid digest 'sha256:xyz': expected 64 hex characters after 'sha256:', got 3");
}

} // namespace
} // namespace lume_unlock::oci
