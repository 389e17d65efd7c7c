#include "util/edit_distance.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

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
