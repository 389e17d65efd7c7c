#include "recipe/size.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::recipe {
namespace {

TEST(Size, ParsesLumeSpellings) {
  EXPECT_EQ(parse_size("16GB").value(), 16ULL << 30);
  EXPECT_EQ(parse_size("16 gb").value(), 16ULL << 30);
  EXPECT_EQ(parse_size(" 8192MB ").value(), 8ULL << 30);
  EXPECT_EQ(parse_size("0.5tb").value(), 512ULL << 30);
  EXPECT_EQ(parse_size("1024KB").value(), 1ULL << 20);
  EXPECT_EQ(parse_size("1073741824b").value(), 1ULL << 30);
}

TEST(Size, RejectsWhatLumeRejectsAndBareNumbers) {
  EXPECT_EQ(parse_size("16G").error().message(), "'16G' is not a size: the unit must be TB, GB, MB, KB or B");
  EXPECT_EQ(parse_size("16GiB").error().message(), "'16GiB' is not a size: the unit must be TB, GB, MB, KB or B");
  EXPECT_EQ(parse_size("16").error().message(), "'16' is not a size: the unit is missing");
  EXPECT_EQ(parse_size("-1GB").error().message(), "'-1GB' is not a size: the amount must be a plain non-negative number");
  EXPECT_EQ(parse_size("0GB").error().message(), "'0GB' is not a size: it must be at least 1 byte and at most 8 EB");
  EXPECT_EQ(parse_size("1.2.3GB").error().category(), ErrorCategory::usage);
}

TEST(Size, FormatsForLumeWithTheLargestExactUnit) {
  EXPECT_EQ(format_size_for_lume(16ULL << 30), "16GB");
  EXPECT_EQ(format_size_for_lume(1536ULL << 20), "1536MB");
  EXPECT_EQ(format_size_for_lume(1ULL << 40), "1TB");
  EXPECT_EQ(format_size_for_lume(1000), "1000B");
}

} // namespace
} // namespace lume_unlock::recipe
