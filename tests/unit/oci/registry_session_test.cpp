#include "oci/registry_session.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::oci {
namespace {

util::HttpResponse response(long status, std::string body) {
  util::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

TEST(RegistryHttpError, UsesTheRegistrysErrorsAndRedactsTheUrl) {
  auto e = make_http_error(
      "GET",
      "https://user:pw@ghcr.io/v2/a/b/manifests/v1?token=abc",
      response(404,
               "{\"errors\":[{\"code\":\"MANIFEST_UNKNOWN\",\"message\":\"manifest unknown\","
               "\"detail\":{\"Tag\":\"v1\"}},{\"code\":\"NAME_UNKNOWN\"}]}"));
  EXPECT_FALSE(e.temporary());
  auto error = e.to_error("cannot get manifest 'ghcr.io/a/b:v1'");
  EXPECT_EQ(error.message(),
            "cannot get manifest 'ghcr.io/a/b:v1': GET "
            "https://ghcr.io/v2/a/b/manifests/v1?token=REDACTED "
            "answered HTTP 404: MANIFEST_UNKNOWN: manifest unknown; NAME_UNKNOWN");
  EXPECT_EQ(error.category(), ErrorCategory::registry);
  EXPECT_EQ(error.hint(),
            "check the repository and tag (skopeo list-tags docker://REPOSITORY lists the tags)");
}

TEST(RegistryHttpError, ACodeThatIsNotAStringIsLeftOutNotThrown) {
  auto e = make_http_error(
      "GET",
      "https://ghcr.io/v2/a/b/manifests/v1",
      response(404, "{\"errors\":[{\"code\":{},\"message\":\"manifest unknown\"}]}"));
  EXPECT_EQ(e.to_error("w").message(),
            "w: GET https://ghcr.io/v2/a/b/manifests/v1 answered HTTP 404: manifest unknown");
}

TEST(RegistryHttpError, FallsBackToACappedPrintablePreview) {
  std::string body = "<html>\n" + std::string(400, 'x');
  auto e =
      make_http_error("PUT", "http://127.0.0.1:5000/v2/a/blobs/uploads/x", response(502, body));
  EXPECT_TRUE(e.temporary());
  EXPECT_EQ(e.body_preview, "<html>." + std::string(249, 'x') + "... (407 bytes)");
  EXPECT_EQ(e.to_error("w").hint(), "the registry is failing or rate-limiting; retry later");
}

TEST(RegistryHttpError, TemporaryFor5xxAnd429Only) {
  for (long status : {429L, 500L, 503L}) {
    EXPECT_TRUE(make_http_error("GET", "u", response(status, "")).temporary()) << status;
  }
  for (long status : {400L, 401L, 403L, 404L}) {
    EXPECT_FALSE(make_http_error("GET", "u", response(status, "")).temporary()) << status;
  }
  EXPECT_EQ(make_http_error("GET", "http://h/v2/", response(401, "")).why(),
            "GET http://h/v2/ answered HTTP 401");
}

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
