#include "policy/policy.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::policy {
namespace {

struct NumberCase {
  const char* name;
  std::string text;
  NumberError error;
  std::uint64_t value;
};

TEST(ParseUnsigned, FollowsTheWholeStringRules) {
  const NumberCase cases[] = {
      {"decimal", "1009", NumberError::none, 1009},
      {"zero", "0", NumberError::none, 0},
      {"leading zero: octal to strtoull, refused", "01009", NumberError::invalid_character, 0},
      {"leading zero of a valid octal", "01751", NumberError::invalid_character, 0},
      {"leading zero after the hex prefix is hex", "0x03f1", NumberError::none, 1009},
      {"lower hex", "0x3f1", NumberError::none, 1009},
      {"upper hex with upper prefix", "0X3F1", NumberError::none, 1009},
      {"max uint64", "18446744073709551615", NumberError::none, UINT64_MAX},
      {"max uint64 hex", "0xFFFFFFFFFFFFFFFF", NumberError::none, UINT64_MAX},
      {"empty", "", NumberError::empty, 0},
      {"bare prefix", "0x", NumberError::invalid_character, 0},
      {"trailing space", "1009 ", NumberError::invalid_character, 0},
      {"leading space", " 1009", NumberError::invalid_character, 0},
      {"plus sign", "+1009", NumberError::invalid_character, 0},
      {"minus sign", "-1009", NumberError::invalid_character, 0},
      {"trailing junk", "1009abc", NumberError::invalid_character, 0},
      {"hex digit in decimal", "10a9", NumberError::invalid_character, 0},
      {"bad hex digit", "0x3g1", NumberError::invalid_character, 0},
      {"float", "1009.0", NumberError::invalid_character, 0},
      {"embedded NUL", std::string("1009\0", 5), NumberError::invalid_character, 0},
      {"overflow by one", "18446744073709551616", NumberError::overflow, 0},
      {"hex overflow", "0x10000000000000000", NumberError::overflow, 0},
      {"huge", "99999999999999999999999", NumberError::overflow, 0},
  };
  for (const NumberCase& c : cases) {
    const ParsedNumber parsed = parse_unsigned(c.text);
    EXPECT_EQ(parsed.error, c.error) << c.name;
    if (c.error == NumberError::none) {
      EXPECT_EQ(parsed.value, c.value) << c.name;
    }
    EXPECT_EQ(parsed.ok(), c.error == NumberError::none) << c.name;
  }
}

} // namespace
} // namespace lume_unlock::policy
