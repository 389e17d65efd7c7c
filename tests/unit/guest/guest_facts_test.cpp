#include "guest/guest_records.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::guest {
namespace {

std::string records(std::initializer_list<std::pair<const char*, std::string>> fields) {
  std::string out;
  for (const auto& [key, value] : fields) {
    out += "fact " + std::to_string(value.size()) + " " + key + "\n" + value;
  }
  return out;
}

TEST(GuestFacts, ParsesAMacOSGuest) {
  auto facts = parse_guest_facts(records({{"product_version", "26.5.2"},
                                          {"build_version", "25F84"},
                                          {"kernel", "Darwin"},
                                          {"machine", "arm64"},
                                          {"uid", "501"},
                                          {"home", "/Users/lume"}}));
  ASSERT_TRUE(facts.ok()) << facts.error().message();
  GuestFacts expected;
  expected.product_version = "26.5.2";
  expected.build_version = "25F84";
  expected.kernel = "Darwin";
  expected.machine = "arm64";
  expected.uid = 501;
  expected.home = "/Users/lume";
  EXPECT_EQ(facts.value(), expected);
}

TEST(GuestFacts, MissingSwVersLeavesTheVersionsAbsent) {
  auto facts = parse_guest_facts(records({{"product_version", ""},
                                          {"build_version", ""},
                                          {"kernel", "Linux"},
                                          {"machine", "x86_64"},
                                          {"uid", "1000"},
                                          {"home", "/home/u"}}));
  ASSERT_TRUE(facts.ok()) << facts.error().message();
  EXPECT_FALSE(facts.value().product_version.has_value());
  EXPECT_FALSE(facts.value().build_version.has_value());
  EXPECT_EQ(facts.value().kernel, "Linux");
}

TEST(GuestFacts, HomeWithSpacesAndNewlinesSurvives) {
  auto facts = parse_guest_facts(records(
      {{"kernel", "Darwin"}, {"machine", "arm64"}, {"uid", "501"}, {"home", "/Users/a b\nc=d"}}));
  ASSERT_TRUE(facts.ok()) << facts.error().message();
  EXPECT_EQ(facts.value().home, "/Users/a b\nc=d");
}

TEST(GuestFacts, BadOutputNamesTheProblem) {
  struct Case {
    const char* name;
    std::string output;
    std::string why;
  };
  const std::string base = records({{"kernel", "Darwin"}, {"machine", "arm64"}});
  const Case cases[] = {
      {"no uid", base + records({{"home", "/Users/lume"}}), "no value for 'uid'"},
      {"uid not a number",
       base + records({{"uid", "x1"}, {"home", "/h"}}),
       "'id -u' printed 'x1', not a number"},
      {"relative home",
       base + records({{"uid", "1"}, {"home", "h"}}),
       "$HOME is 'h', not an absolute path"},
      {"no kernel",
       records({{"machine", "arm64"}, {"uid", "1"}, {"home", "/h"}}),
       "no value for 'kernel'"},
      {"truncated", base + "fact 5 uid\n12", "output ends inside the record 'fact 5 uid'"},
      {"no header", "garbage", "unexpected output: a record header without a newline"},
  };
  for (const auto& c : cases) {
    auto facts = parse_guest_facts(c.output);
    ASSERT_FALSE(facts.ok()) << c.name;
    EXPECT_EQ(facts.error().category(), ErrorCategory::guest) << c.name;
    EXPECT_EQ(facts.error().message(),
              "reading the guest's facts (sw_vers, uname, id, $HOME): " + c.why)
        << c.name;
  }
}

} // namespace
} // namespace lume_unlock::guest
