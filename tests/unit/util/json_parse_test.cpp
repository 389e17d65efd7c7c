#include "util/json_reader.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::util {
namespace {

using Kind = JsonSyntaxError::Kind;

TEST(JsonParse, ParsesADocument) {
  const JsonParsed parsed = parse_json(R"({"a": [1, 2.5, "x"]})");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.value["a"][1], 2.5);
}

TEST(JsonParse, EveryBadTextIsAnErrorNotAnException) {
  struct Case {
    std::string text;
    Kind kind;
    std::string described;
  };
  const Case cases[] = {
      {R"({"n": 1e999})",
       Kind::out_of_range,
       "a number is out of range (number overflow parsing '1e999')"},
      {R"([-1e999])",
       Kind::out_of_range,
       "a number is out of range (number overflow parsing '-1e999')"},
      {R"({"n": )", Kind::truncated, "it ends early, after 6 bytes"},
      {"", Kind::truncated, "it ends early, after 0 bytes"},
      {"[x]",
       Kind::syntax,
       "at byte 2: parse error at line 1, column 2: syntax error while parsing value - invalid "
       "literal; last read: '[x'"},
      {"{} {}",
       Kind::syntax,
       "at byte 4: parse error at line 1, column 4: syntax error while parsing value - unexpected "
       "'{'; expected end of input"},
  };
  for (const auto& c : cases) {
    JsonParsed parsed;
    EXPECT_NO_THROW(parsed = parse_json(c.text)) << c.text;
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_TRUE(parsed.value.is_discarded()) << c.text;
    EXPECT_EQ(parsed.error->kind, c.kind) << c.text;
    EXPECT_EQ(describe_json_error(*parsed.error, c.text.size()), c.described) << c.text;
  }
}

TEST(JsonParse, TheLargestDoubleStillParses) {
  const JsonParsed parsed = parse_json("[1.7976931348623157e308, 1e-999]");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.value[0].get<double>(), 1.7976931348623157e308);
}

} // namespace
} // namespace lume_unlock::util
