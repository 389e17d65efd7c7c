#include "lume/host_preference.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

HostPreference readable(const std::string& value) {
  HostPreference preference;
  preference.readable = true;
  preference.value = value;
  return preference;
}

TEST(HostPreference, DescriptionSaysSetUnsetOrTheValue) {
  EXPECT_EQ(describe_host_preference(readable("1")), "ForceUnrestrictedDeviceFeatureLevel is set");
  EXPECT_EQ(describe_host_preference(readable("")),
            "ForceUnrestrictedDeviceFeatureLevel is not set");
  EXPECT_EQ(describe_host_preference(readable("0")), "ForceUnrestrictedDeviceFeatureLevel is '0'");
}

TEST(HostPreference, WarningDescribesItAndGivesTheBoolCommand) {
  EXPECT_FALSE(host_preference_warning(readable("1")));
  EXPECT_FALSE(host_preference_warning(HostPreference{})); // off macOS: nothing to say
  const auto warning = host_preference_warning(readable("0"));
  ASSERT_TRUE(warning);
  EXPECT_THAT(*warning, HasSubstr(describe_host_preference(readable("0"))));
  EXPECT_THAT(*warning,
              HasSubstr("'defaults write com.apple.gpusw.ParavirtualizedGraphics "
                        "ForceUnrestrictedDeviceFeatureLevel -bool true'"));
  EXPECT_THAT(*warning, Not(HasSubstr("-int")));
}

TEST(HostPreference, DoctorFixIsTheSameCommand) {
  EXPECT_EQ(k_host_preference_fix.rfind(k_host_preference_command, 0), 0u);
}

} // namespace
} // namespace lume_unlock::lume
