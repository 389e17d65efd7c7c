#include "util/size.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

TEST(Size, FormatsTheWayLumeParses) {
  const std::pair<std::uint64_t, std::string> cases[] = {
      {16ull << 30, "16GB"},
      {1ull << 40, "1024GB"},
      {8192ull << 20, "8GB"},
      {1536ull << 20, "1536MB"},
      {3ull << 10, "3KB"},
      {1000, "1000b"},
      {0, "0b"},
  };
  for (const auto& [bytes, text] : cases) {
    EXPECT_EQ(format_size(bytes), text) << bytes;
    EXPECT_EQ(parse_size(text).value(), bytes) << text;
  }
}

TEST(Size, ParsesLumeSizeStrings) {
  const std::pair<std::string, std::uint64_t> cases[] = {
      {"16GB", 16ull << 30},
      {"16 gb", 16ull << 30},
      {" 8.5GB ", 8704ull << 20},
      {"8192MB", 8ull << 30},
      {"1TB", 1ull << 40},
      {"0.5tb", 512ull << 30},
      {"1024KB", 1ull << 20},
      {"1073741824b", 1ull << 30},
      {"16", 16ull << 30},
      {"0.5KB", 512},
      {"17179869184.5KB", (16ull << 40) + 512},
      {".25mb", 256ull << 10},
      {"16.000GB", 16ull << 30},
      {"18446744073709551615b", 18446744073709551615ull},
  };
  for (const auto& [text, bytes] : cases) {
    auto parsed = parse_size(text);
    ASSERT_TRUE(parsed.ok()) << text;
    EXPECT_EQ(parsed.value(), bytes) << text;
  }
}

TEST(Size, RejectsWhatLumeRejects) {
  const std::pair<std::string, std::string> cases[] = {
      {"16G", "invalid size '16G': unknown unit (use TB, GB, MB, KB or b)"},
      {"16GiB", "invalid size '16GiB': unknown unit (use TB, GB, MB, KB or b)"},
      {"-1GB", "invalid size '-1GB': sizes cannot be negative"},
      {"GB", "invalid size 'GB': no number"},
      {"", "invalid size '': no number"},
      {"1.2.3GB", "invalid size '1.2.3GB': not a number"},
      {"99999999999TB", "invalid size '99999999999TB': too large"},
      {"18446744073709551616b", "invalid size '18446744073709551616b': too large"},
      {"1.5b", "invalid size '1.5b': not a whole number of bytes"},
      {"0.0001KB", "invalid size '0.0001KB': not a whole number of bytes"},
      {"1.0000000000000000000000000000000000001GB",
       "invalid size '1.0000000000000000000000000000000000001GB': not a whole number of bytes"},
      {".", "invalid size '.': not a number"},
  };
  for (const auto& [text, message] : cases) {
    auto parsed = parse_size(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().message(), message);
    EXPECT_EQ(parsed.error().category(), ErrorCategory::usage);
  }
}

} // namespace
} // namespace lume_unlock::util
