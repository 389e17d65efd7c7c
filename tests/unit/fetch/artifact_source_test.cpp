#include "fetch/fetch.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace lume_unlock::fetch {
namespace {

const std::string k_hex(64, 'a');

TEST(ArtifactSource, HttpsUrlsAreAcceptedAsWritten) {
  for (const char* url : {"https://github.com/ggml-org/llama.cpp/releases/download/b6000/x.zip",
                          "https://huggingface.co/org/model/resolve/main/model.gguf?download=true",
                          "https://127.0.0.1:8443/a",
                          "https://[::1]:8443/a"}) {
    auto source = parse_https_source(url);
    ASSERT_TRUE(source.ok()) << url << ": " << source.error().message();
    EXPECT_EQ(source.value().kind, ArtifactSource::Kind::https);
    EXPECT_EQ(source.value().text, url);
    EXPECT_EQ(describe(source.value()), url);
  }
}

struct BadSource {
  std::string text;
  std::string message;
  std::string hint;
};

TEST(ArtifactSource, BadUrlsAreRefusedWithMessagesARecipeParserCanPrefix) {
  const BadSource cases[] = {
      {"", "must not be empty", "use https://…, oci://REGISTRY/REPO@sha256:<hex> or a host file"},
      {"https://example.com/" + std::string(2048, 'a'),
       "is 2068 characters long; the limit is 2048",
       ""},
      {"https://example.com/a b",
       "'https://example.com/a b' contains a space or control character "
       "at byte 21",
       "percent-encode it (a space is %20)"},
      {"https://example.com/a\nb",
       "'https://example.com/a\\x0ab' contains a space or control character at byte 21",
       "percent-encode it (a space is %20)"},
      {"http://example.com/x.zip",
       "'http://example.com/x.zip' is plain HTTP; artifacts are fetched over TLS only",
       "use 'https://example.com/x.zip'"},
      {"ftp://example.com/x.zip",
       "'ftp://example.com/x.zip' has the scheme 'ftp'; only https:// and oci:// are fetched",
       "use https://…, oci://REGISTRY/REPO@sha256:<hex> or a host file"},
      {"example.com/x.zip",
       "'example.com/x.zip' is not a URL (no scheme)",
       "use https://…, oci://REGISTRY/REPO@sha256:<hex> or a host file"},
      {"https:///x.zip", "'https:///x.zip' has no host", ""},
      {"https://:443/x.zip", "'https://:443/x.zip' has no host", ""},
      {"https://me:s3cret@example.com/x.zip",
       "'https://example.com/x.zip' carries user information before the host; credentials never "
       "belong in a recipe",
       "remove the 'user:password@' part"},
  };
  for (const auto& c : cases) {
    auto source = parse_https_source(c.text);
    ASSERT_FALSE(source.ok()) << c.text;
    EXPECT_EQ(source.error().message(), c.message) << c.text;
    EXPECT_EQ(source.error().hint(), c.hint) << c.text;
    EXPECT_EQ(source.error().category(), ErrorCategory::usage) << c.text;
    // The password never reaches a message or a hint.
    EXPECT_EQ(source.error().message().find("s3cret"), std::string::npos);
    EXPECT_EQ(source.error().hint().find("s3cret"), std::string::npos);
  }
}

TEST(ArtifactSource, OciBlobsArePinnedByDigest) {
  auto source = parse_url_source("oci://ghcr.io/org/models@sha256:" + k_hex);
  ASSERT_TRUE(source.ok()) << source.error().message();
  EXPECT_EQ(source.value().kind, ArtifactSource::Kind::oci);
  EXPECT_EQ(source.value().text, "ghcr.io/org/models@sha256:" + k_hex);
  ASSERT_TRUE(source.value().reference.digest.has_value());
  EXPECT_EQ(source.value().reference.digest->hex(), k_hex);
  EXPECT_EQ(describe(source.value()), "oci://ghcr.io/org/models@sha256:" + k_hex);
}

TEST(ArtifactSource, OciTagsAreRefused) {
  const BadSource cases[] = {
      {"oci://ghcr.io/org/models:v1",
       "'oci://ghcr.io/org/models:v1' is not pinned by digest; a tag can move under the recipe",
       "write oci://ghcr.io/org/models@sha256:<hex>"},
      {"oci://ghcr.io/org/models:v1@sha256:" + k_hex,
       "'oci://ghcr.io/org/models:v1@sha256:" + k_hex +
           "' names the tag 'v1' beside the digest; the digest alone pins the artifact",
       "write oci://ghcr.io/org/models@sha256:" + k_hex},
      {"ghcr.io/org/models@sha256:" + k_hex,
       "'ghcr.io/org/models@sha256:" + k_hex + "' is not an oci:// reference",
       "write oci://REGISTRY/REPO@sha256:<hex>"},
  };
  for (const auto& c : cases) {
    auto source = parse_oci_source(c.text);
    ASSERT_FALSE(source.ok()) << c.text;
    EXPECT_EQ(source.error().message(), c.message) << c.text;
    EXPECT_EQ(source.error().hint(), c.hint) << c.text;
    EXPECT_EQ(source.error().category(), ErrorCategory::usage) << c.text;
  }
}

TEST(ArtifactSource, UrlFieldDispatchesOnTheScheme) {
  EXPECT_EQ(parse_url_source("https://example.com/a").value().kind, ArtifactSource::Kind::https);
  auto plain = parse_url_source("http://example.com/a");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().message(),
            "'http://example.com/a' is plain HTTP; artifacts are fetched over TLS only");
}

TEST(ArtifactSource, DescribeRedactsCredentialsInQueries) {
  auto source = parse_https_source("https://cdn.example.com/x.gguf?token=abc123&x=1");
  ASSERT_TRUE(source.ok());
  EXPECT_EQ(describe(source.value()).find("abc123"), std::string::npos) << describe(source.value());
  EXPECT_EQ(describe(file_source("/srv/models/m.gguf")), "/srv/models/m.gguf");
}

TEST(MirrorMap, TheLongestMatchingPrefixIsReplacedAndOtherUrlsStay) {
  MirrorMap map;
  ASSERT_TRUE(map.add("https://github.com/=https://mirror.example/gh/", "test").ok());
  ASSERT_TRUE(map.add("https://github.com/ggml-org/=https://ggml.mirror.example/", "test").ok());
  EXPECT_EQ(map.apply("https://github.com/ggml-org/llama.cpp/releases/download/b1/x.tar.gz"),
            "https://ggml.mirror.example/llama.cpp/releases/download/b1/x.tar.gz");
  EXPECT_EQ(map.apply("https://github.com/other/x"), "https://mirror.example/gh/other/x");
  EXPECT_EQ(map.apply("https://github.company.example/x"), "https://github.company.example/x")
      << "prefixes end in '/', so a rule never matches part of a host name";
  EXPECT_EQ(map.apply("https://huggingface.co/a"), "https://huggingface.co/a");
}

TEST(MirrorMap, BadRulesNameTheirOriginAndHideCredentials) {
  MirrorMap map;
  for (const char* rule : {"https://github.com/",
                           "http://github.com/=https://m.example/",
                           "https://github.com=https://m.example/",
                           "https://github.com/=/local/"}) {
    auto bad = map.add(rule, "LUME_UNLOCK_MIRROR");
    ASSERT_FALSE(bad.ok()) << rule;
    EXPECT_EQ(bad.error().category(), ErrorCategory::usage);
    EXPECT_EQ(bad.error().what_failed(), "LUME_UNLOCK_MIRROR");
    EXPECT_EQ(bad.error().hint(), "for example https://github.com/=https://mirror.example/github/");
  }
  auto secret = map.add("https://github.com/=https://me:s3cret@m.example/", "--mirror");
  ASSERT_FALSE(secret.ok());
  EXPECT_EQ(secret.error().message().find("s3cret"), std::string::npos) << secret.error().message();
  EXPECT_TRUE(map.rules().empty());
}

TEST(MirrorMap, ReadsTheEnvironmentThenTheOptions) {
  ::setenv("LUME_UNLOCK_MIRROR",
           " https://github.com/=https://a.example/gh/\n https://x.example/=https://b.example/ ",
           1);
  ::setenv("HF_ENDPOINT", "https://hf-mirror.example", 1);
  auto map = MirrorMap::from_environment({"https://y.example/=https://c.example/"});
  ::unsetenv("LUME_UNLOCK_MIRROR");
  ::unsetenv("HF_ENDPOINT");
  ASSERT_TRUE(map.ok()) << map.error().message();
  EXPECT_EQ(map.value().rules().size(), 4u);
  EXPECT_EQ(map.value().apply("https://huggingface.co/TheBloke/m/resolve/abc/f.gguf"),
            "https://hf-mirror.example/TheBloke/m/resolve/abc/f.gguf");
  EXPECT_EQ(map.value().apply("https://y.example/z"), "https://c.example/z");

  ::setenv("LUME_UNLOCK_MIRROR", "nonsense", 1);
  auto bad = MirrorMap::from_environment();
  ::unsetenv("LUME_UNLOCK_MIRROR");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().what_failed(), "LUME_UNLOCK_MIRROR");
}

} // namespace
} // namespace lume_unlock::fetch
