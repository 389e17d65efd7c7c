#include "macho/macho.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::macho {
namespace {

TEST(MachoEntitlements, OnlyAKeyFollowedByTrueIsGranted) {
  const std::string plist = "<plist><dict>\n"
                            "\t<key>com.apple.security.cs.allow-dyld-environment-variables</key>\n"
                            "\t<true/>\n"
                            "\t<key>com.apple.security.cs.disable-library-validation</key>\n"
                            "\t<false/>\n"
                            "\t<key>other</key><true/>\n"
                            "</dict></plist>";
  EXPECT_TRUE(entitlement_is_true(plist, k_allow_dyld_environment));
  EXPECT_FALSE(entitlement_is_true(plist, k_disable_library_validation));
  EXPECT_FALSE(entitlement_is_true(plist, "com.apple.security.get-task-allow"));
  // A key that is only a prefix of the one asked for, a string value, text cut short.
  EXPECT_FALSE(
      entitlement_is_true("<key>com.apple.security.cs</key><true/>", "com.apple.security"));
  EXPECT_FALSE(entitlement_is_true("<key>k</key><string>true</string>", "k"));
  EXPECT_FALSE(entitlement_is_true("<key>k</key><tru", "k"));
  EXPECT_FALSE(entitlement_is_true("", "k"));
}

} // namespace
} // namespace lume_unlock::macho
