#include "fetch/mirror_map.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace lume_unlock::fetch {
namespace {

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
