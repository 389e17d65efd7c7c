#include "util/archive.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

struct ProblemCase {
  const char* name;
  std::string path;
  std::optional<PathProblem> expected;
};

TEST(RelativePath, ProblemsAreNamed) {
  const ProblemCase cases[] = {
      {"plain file", "bundle.json", std::nullopt},
      {"nested", "linux-x86_64/liblume-unlock-shim.so", std::nullopt},
      {"dot prefix", "./a/b", std::nullopt},
      {"dots inside names", "a..b/..c", std::nullopt},
      {"empty", "", PathProblem::empty},
      {"absolute", "/etc/passwd", PathProblem::absolute},
      {"parent at start", "../x", PathProblem::parent_component},
      {"parent in the middle", "a/../../x", PathProblem::parent_component},
      {"parent at end", "a/..", PathProblem::parent_component},
      {"nul byte", std::string("a\0b", 3), PathProblem::nul_byte},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(relative_path_problem(c.path), c.expected) << c.name;
  }
}

TEST(RelativePath, DescriptionsReadAfterAQuotedPath) {
  EXPECT_STREQ(describe(PathProblem::absolute), "is an absolute path");
  EXPECT_STREQ(describe(PathProblem::parent_component), "contains a '..' component");
  EXPECT_STREQ(describe(PathProblem::empty), "is empty");
  EXPECT_STREQ(describe(PathProblem::nul_byte), "contains a NUL byte");
}

TEST(RelativePath, NormalizationDropsDotsAndRepeatedSlashes) {
  EXPECT_EQ(normalize_relative_path("./a//b/"), "a/b");
  EXPECT_EQ(normalize_relative_path("a/./b"), "a/b");
  EXPECT_EQ(normalize_relative_path("./"), "");
  EXPECT_EQ(normalize_relative_path("bundle.json"), "bundle.json");
}

} // namespace
} // namespace lume_unlock::util
