#include "lume/host_preference.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

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
  EXPECT_NE(warning->find(describe_host_preference(readable("0"))), std::string::npos) << *warning;
  EXPECT_NE(warning->find("'defaults write com.apple.gpusw.ParavirtualizedGraphics "
                          "ForceUnrestrictedDeviceFeatureLevel -bool true'"),
            std::string::npos)
      << *warning;
  EXPECT_EQ(warning->find("-int"), std::string::npos) << *warning;
}

TEST(HostPreference, DoctorFixIsTheSameCommand) {
  EXPECT_EQ(k_host_preference_fix.rfind(k_host_preference_command, 0), 0u);
}

} // namespace
} // namespace lume_unlock::lume
