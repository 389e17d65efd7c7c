#include "lume/types.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

TEST(VmName, SafeNamesAreAccepted) {
  for (const char* name : {"dev", "ci-tahoe", "a.b_c-1", "...", ".hidden", "X", "0"}) {
    EXPECT_TRUE(check_vm_name(name).ok()) << name;
  }
  EXPECT_TRUE(check_vm_name(std::string(255, 'a')).ok());
}

TEST(VmName, UnsafeNamesAreUsageErrorsNamingTheProblem) {
  const struct {
    std::string name;
    std::string message;
  } cases[] = {
      {"", "invalid VM name '': the name is empty"},
      {".", "invalid VM name '.': '.' and '..' name directories, not VMs"},
      {"..", "invalid VM name '..': '.' and '..' name directories, not VMs"},
      {"a/b", "invalid VM name 'a/b': '/' is not allowed"},
      {"../x", "invalid VM name '../x': '/' is not allowed"},
      {"img:tag", "invalid VM name 'img:tag': ':' is not allowed"},
      {"my vm", "invalid VM name 'my vm': a space is not allowed"},
      {"a%20b", "invalid VM name 'a%20b': '%' is not allowed"},
      {"a?b", "invalid VM name 'a?b': '?' is not allowed"},
      {"a#b", "invalid VM name 'a#b': '#' is not allowed"},
      {"tab\t", "invalid VM name 'tab\t': byte 0x09 is not allowed"},
      {"caf\xc3\xa9", "invalid VM name 'caf\xc3\xa9': byte 0xc3 is not allowed"},
      {std::string(256, 'a'),
       "invalid VM name '" + std::string(256, 'a') + "': longer than 255 bytes"},
  };
  for (const auto& c : cases) {
    auto checked = check_vm_name(c.name);
    ASSERT_FALSE(checked.ok()) << c.name;
    EXPECT_EQ(checked.error().message(), c.message);
    EXPECT_EQ(checked.error().category(), ErrorCategory::usage);
    EXPECT_EQ(checked.error().hint(),
              "use only letters, digits, '.', '_' and '-' (for example 'ci-tahoe')");
  }
}

TEST(VmName, ANameStartingWithADashIsRefusedAsAnOption) {
  auto parsed = VmName::parse("-rf");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message(),
            "invalid VM name '-rf': it starts with '-', which reads as an option");
  EXPECT_TRUE(VmName::parse("a-").ok());
}

TEST(VmName, ParsedNamesKeepTheirTextAndLiteralsAreChecked) {
  const VmName parsed = VmName::parse("ci-tahoe.1").value();
  EXPECT_EQ(parsed.str(), "ci-tahoe.1");
  EXPECT_EQ(parsed, VmName("ci-tahoe.1"));
  EXPECT_THROW(VmName("a/b"), Error);
}

} // namespace
} // namespace lume_unlock::lume
