#include "policy/c_api.h"
#include "policy/policy.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::policy {
namespace {

const std::string k_exe = "/opt/llama/bin/llama-server";

ActivationInput configured() {
  ActivationInput in;
  in.env.apple_family_max = "1009";
  in.executable_path = k_exe;
  return in;
}

TEST(Decide, ActiveWithACeilingAndNoGuard) {
  const ConfigResult result = decide(configured());
  EXPECT_EQ(result.reason, Reason::active);
  EXPECT_EQ(result.profile.apple_family_max, 1009u);
  EXPECT_EQ(result.profile.max_threadgroup_memory, 65536u);
}

TEST(Decide, KillSwitchWinsOverEverything) {
  ActivationInput in = configured();
  in.env.disable = "1";
  EXPECT_EQ(decide(in).reason, Reason::disabled);
  in.env.apple_family_max = "junk"; // even a bad configuration reports the kill switch
  EXPECT_EQ(decide(in).reason, Reason::disabled);
  in.env.apple_family_max = "1009";
  in.env.disable = "0";
  EXPECT_EQ(decide(in).reason, Reason::active);
}

TEST(Decide, GuardListingTheExecutableActivates) {
  ActivationInput in = configured();
  in.env.enablement = "/guard";
  const std::string guard = "# guard\r\n" + k_exe + "\r\n"; // outlives the view
  in.guard_text = guard;
  EXPECT_EQ(decide(in).reason, Reason::active);
}

TEST(Decide, GuardNotListingTheExecutableStaysInert) {
  ActivationInput in = configured();
  in.env.enablement = "/guard";
  in.guard_text = "/opt/other\n";
  EXPECT_EQ(decide(in).reason, Reason::executable_not_enabled);
}

TEST(Decide, UnreadableGuardStaysInert) {
  ActivationInput in = configured();
  in.env.enablement = "/guard";
  in.guard_text = std::nullopt;
  EXPECT_EQ(decide(in).reason, Reason::enablement_unreadable);
}

TEST(Decide, UnresolvedExecutableWithAGuardStaysInert) {
  ActivationInput in = configured();
  in.env.enablement = "/guard";
  in.guard_text = k_exe;
  in.executable_path = std::nullopt;
  EXPECT_EQ(decide(in).reason, Reason::executable_unresolved);
}

TEST(Decide, GuardIsIgnoredWhenEnablementIsUnset) {
  ActivationInput in = configured();
  in.guard_text = std::nullopt;
  in.executable_path = std::nullopt;
  EXPECT_EQ(decide(in).reason, Reason::active);
}

TEST(Decide, ConfigurationErrorsComeBeforeTheGuard) {
  ActivationInput in = configured();
  in.env.apple_family_max = "1000";
  in.env.enablement = "/guard";
  in.guard_text = std::nullopt;
  EXPECT_EQ(decide(in).reason, Reason::apple_family_max_out_of_range);
}

lume_unlock_text text(const char* s) {
  return lume_unlock_text{s, std::char_traits<char>::length(s)};
}

TEST(PolicyCApi, DecidesLikeTheCppInterface) {
  lume_unlock_activation_input in{};
  in.apple_family_max = text("0x3F1");
  in.max_threadgroup_memory = text("32768");
  in.recommended_working_set = text("12009492480");
  const lume_unlock_decision d = lume_unlock_policy_decide(&in);
  EXPECT_EQ(d.reason, 0u);
  EXPECT_EQ(d.profile.apple_family_max, 1009u);
  EXPECT_EQ(d.profile.max_threadgroup_memory, 32768u);
  EXPECT_EQ(d.profile.raise_working_set, 1);
  EXPECT_EQ(d.profile.recommended_working_set, 12009492480u);
  EXPECT_STREQ(lume_unlock_policy_reason_name(d.reason), "active");

  in.disable = text("1");
  EXPECT_STREQ(lume_unlock_policy_reason_name(lume_unlock_policy_decide(&in).reason), "disabled");
  EXPECT_EQ(lume_unlock_policy_decide(nullptr).reason,
            static_cast<std::uint32_t>(Reason::apple_family_max_unset));
}

TEST(PolicyCApi, AnswersLikeTheCppInterface) {
  lume_unlock_profile p{};
  p.apple_family_max = 1007;
  EXPECT_EQ(lume_unlock_policy_family_forced_true(&p, 1007), 1);
  EXPECT_EQ(lume_unlock_policy_family_forced_true(&p, 1008), 0);
  EXPECT_EQ(lume_unlock_policy_family_forced_true(&p, 5001), 0);
  EXPECT_EQ(lume_unlock_policy_raise_limit(32768, 65536), 65536u);
  EXPECT_EQ(lume_unlock_policy_raise_limit(131072, 65536), 131072u);
}

} // namespace
} // namespace lume_unlock::policy
