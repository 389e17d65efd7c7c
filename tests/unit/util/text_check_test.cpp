#include "util/text_check.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::util {
namespace {

TEST(TextCheck, QuoteKeepsPrintableAndUtf8AndEscapesControls) {
  EXPECT_EQ(quote_for_message("llama server"), "'llama server'");
  EXPECT_EQ(quote_for_message("caf\xc3\xa9 \xe2\x9c\x93"), "'caf\xc3\xa9 \xe2\x9c\x93'");
  EXPECT_EQ(quote_for_message("a\tb"), "'a\\tb'");
  EXPECT_EQ(quote_for_message("a\nb\x1b[31m"), "'a\\x0ab\\x1b[31m'");
  EXPECT_EQ(quote_for_message(std::string("x\0y", 3)), "'x\\x00y'");
  EXPECT_EQ(quote_for_message("bad \xff\xc3"), "'bad \\xff\\xc3'");
}

TEST(TextCheck, AcceptsTabSpacesShellCharactersAndUtf8) {
  EXPECT_EQ(text_problem(""), std::nullopt);
  EXPECT_EQ(text_problem("--prompt\t\"it's <a> & $(rm -rf /)\""), std::nullopt);
  EXPECT_EQ(text_problem("\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\xa6\x99"), std::nullopt);
}

TEST(TextCheck, NamesTheFirstForbiddenByte) {
  struct Case {
    std::string text;
    std::string problem;
  };
  const Case cases[] = {
      {"a\nb", "contains a control character (0x0a at byte 1); only tab is allowed"},
      {"\r", "contains a control character (0x0d at byte 0); only tab is allowed"},
      {std::string("ab\0", 3),
       "contains a control character (0x00 at byte 2); only tab is allowed"},
      {"x\x7f", "contains a control character (0x7f at byte 1); only tab is allowed"},
      {"ok\xc3(", "is not valid UTF-8 (at byte 2)"},
      {"\xc0\xaf", "is not valid UTF-8 (at byte 0)"},         // overlong '/'
      {"\xed\xa0\x80", "is not valid UTF-8 (at byte 0)"},     // surrogate
      {"\xf4\x90\x80\x80", "is not valid UTF-8 (at byte 0)"}, // above U+10FFFF
  };
  for (const Case& c : cases) {
    EXPECT_EQ(text_problem(c.text).value_or("<none>"), c.problem) << quote_for_message(c.text);
  }
}

} // namespace
} // namespace lume_unlock::util
