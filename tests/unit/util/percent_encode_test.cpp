#include "util/encoding.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

TEST(PercentEncode, KeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(percent_encode("/Volumes/ssd/lume"), "%2FVolumes%2Fssd%2Flume");
  EXPECT_EQ(percent_encode("home"), "home");
  EXPECT_EQ(percent_encode("a b+c~d_e.f-g"), "a%20b%2Bc~d_e.f-g");
  EXPECT_EQ(percent_encode("\xc3\xa9"), "%C3%A9");
}

TEST(PercentEncode, KeepsTheCharactersTheCallerAllows) {
  EXPECT_EQ(percent_encode("repository:acme/img:pull,push", "/:,"),
            "repository:acme/img:pull,push");
  EXPECT_EQ(percent_encode("a b/c", "/"), "a%20b/c");
}

} // namespace
} // namespace lume_unlock::util
