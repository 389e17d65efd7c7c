#include "util/text.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace lume_unlock::util {
namespace {

TEST(Text, TrimsBothEnds) {
  EXPECT_EQ(trim("  a b \t\r\n"), "a b");
  EXPECT_EQ(trim("\n\n"), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("x"), "x");
  EXPECT_EQ(trim(" \ta\r\n", " \t"), "a\r\n") << "only the characters asked for";
}

TEST(Text, PrefixesAndSuffixes) {
  EXPECT_TRUE(starts_with("sha256:ab", "sha256:"));
  EXPECT_TRUE(starts_with("abc", ""));
  EXPECT_FALSE(starts_with("sha", "sha256:"));
  EXPECT_FALSE(starts_with("xsha256:", "sha256:"));
  EXPECT_TRUE(ends_with("model.gguf", ".gguf"));
  EXPECT_TRUE(ends_with("abc", ""));
  EXPECT_FALSE(ends_with("gguf", ".gguf"));
  EXPECT_FALSE(ends_with("model.gguf.part", ".gguf"));
}

TEST(Text, JoinsWithASeparator) {
  EXPECT_EQ(join(std::vector<std::string>{"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(join(std::vector<std::string>{"", "b"}, "/"), "/b") << "an empty first part counts";
  EXPECT_EQ(join(std::vector<std::string>{"one"}, ", "), "one");
  EXPECT_EQ(join(std::vector<std::string>{}, ", "), "");
  EXPECT_EQ(join(std::set<std::string>{"b", "a"}, " "), "a b");
  const std::map<std::string, int> sizes = {{"a", 1}, {"b", 2}};
  EXPECT_EQ(
      join(sizes, ", ", [](const auto& s) { return s.first + "=" + std::to_string(s.second); }),
      "a=1, b=2");
}

TEST(Text, BaseNameIsWhatFollowsTheLastSlash) {
  EXPECT_EQ(base_name("/Users/lume/llama.cpp"), "llama.cpp");
  EXPECT_EQ(base_name("model.gguf"), "model.gguf");
  EXPECT_EQ(base_name("dir/"), "");
  EXPECT_EQ(base_name(""), "");
}

TEST(Text, PluralUnlessOne) {
  EXPECT_EQ(plural(0, "file"), "0 files");
  EXPECT_EQ(plural(1, "file"), "1 file");
  EXPECT_EQ(plural(2, "entry", "entries"), "2 entries");
  EXPECT_EQ(plural(1, "entry", "entries"), "1 entry");
}

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("status", "status"), 0u);
  EXPECT_EQ(edit_distance("statsu", "status"), 2u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(EditDistance, SuggestsOnlyPlausibleTypos) {
  const std::vector<std::string> commands = {"create", "pull", "status", "verify", "remove"};
  EXPECT_EQ(closest_match("staus", commands), "status");
  EXPECT_EQ(closest_match("craete", commands), "create");
  EXPECT_EQ(closest_match("nonsense", commands), std::nullopt);
}

} // namespace
} // namespace lume_unlock::util
