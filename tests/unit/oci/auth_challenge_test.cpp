#include "oci/auth_challenge.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::oci {
namespace {

TEST(AuthChallenge, ParsesABearerChallengeWithQuotedCommas) {
  auto c = parse_auth_challenge(
      "Bearer "
      "realm=\"https://ghcr.io/token\",service=\"ghcr.io\",scope=\"repository:a/b:pull,push\"");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->scheme, "bearer");
  EXPECT_EQ(c->param("realm"), "https://ghcr.io/token");
  EXPECT_EQ(c->param("service"), "ghcr.io");
  EXPECT_EQ(c->param("scope"), "repository:a/b:pull,push");
  EXPECT_EQ(c->param("error"), std::nullopt);
}

TEST(AuthChallenge, ParsesBasicAndUnquotedValuesAndSpaces) {
  auto basic = parse_auth_challenge("Basic realm=\"Registry Realm\"");
  ASSERT_TRUE(basic.has_value());
  EXPECT_EQ(basic->scheme, "basic");
  EXPECT_EQ(basic->param("realm"), "Registry Realm");
  auto spaced = parse_auth_challenge("  BEARER  Realm = x , Service=\"s\\\"q\"");
  ASSERT_TRUE(spaced.has_value());
  EXPECT_EQ(spaced->scheme, "bearer");
  EXPECT_EQ(spaced->param("realm"), "x");
  EXPECT_EQ(spaced->param("service"), "s\"q");
}

TEST(AuthChallenge, StopsAtASecondChallenge) {
  auto c = parse_auth_challenge("Bearer realm=\"r\", Basic realm=\"b\"");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->scheme, "bearer");
  EXPECT_EQ(c->param("realm"), "r");
}

TEST(AuthChallenge, RejectsEmptyAndBrokenHeaders) {
  EXPECT_EQ(parse_auth_challenge(""), std::nullopt);
  EXPECT_EQ(parse_auth_challenge("   "), std::nullopt);
  EXPECT_EQ(parse_auth_challenge("Bearer realm=\"unterminated"), std::nullopt);
  EXPECT_EQ(parse_auth_challenge("Bearer =x"), std::nullopt);
}

} // namespace
} // namespace lume_unlock::oci
