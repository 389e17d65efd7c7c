#include "policy/policy.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::policy {
namespace {

Environment with_ceiling(std::string_view ceiling) {
  Environment env;
  env.apple_family_max = ceiling;
  return env;
}

struct CeilingCase {
  const char* text;
  Reason reason;
  std::uint64_t ceiling;
};

TEST(ParseConfig, CeilingMustBeAnAppleFamilyFrom1001To1999) {
  const CeilingCase cases[] = {
      {"1000", Reason::apple_family_max_out_of_range, 0},
      {"1001", Reason::active, 1001},
      {"1009", Reason::active, 1009},
      {"0x3F1", Reason::active, 1009},
      {"1999", Reason::active, 1999},
      {"2000", Reason::apple_family_max_out_of_range, 0},
      {"5001", Reason::apple_family_max_out_of_range, 0},
      {"0", Reason::apple_family_max_out_of_range, 0},
      {"1009 ", Reason::apple_family_max_malformed, 0},
      {"+1009", Reason::apple_family_max_malformed, 0},
      {"18446744073709551616", Reason::apple_family_max_malformed, 0},
      {"", Reason::apple_family_max_unset, 0}, // empty counts as unset, as in the certified build
      {"apple9", Reason::apple_family_max_malformed, 0},
  };
  for (const CeilingCase& c : cases) {
    const ConfigResult result = parse_config(with_ceiling(c.text));
    EXPECT_EQ(result.reason, c.reason) << '"' << c.text << '"';
    if (c.reason == Reason::active) {
      EXPECT_EQ(result.profile.apple_family_max, c.ceiling) << c.text;
    }
  }
}

TEST(ParseConfig, MissingCeilingLeavesTheShimInert) {
  EXPECT_EQ(parse_config(Environment{}).reason, Reason::apple_family_max_unset);
  Environment env;
  env.max_threadgroup_memory = "65536";
  EXPECT_EQ(parse_config(env).reason, Reason::apple_family_max_unset);
}

TEST(ParseConfig, ThreadgroupMemoryDefaultsTo65536AndAcceptsHex) {
  EXPECT_EQ(parse_config(with_ceiling("1009")).profile.max_threadgroup_memory, 65536u);
  Environment env = with_ceiling("1009");
  env.max_threadgroup_memory = "0x8000";
  const ConfigResult result = parse_config(env);
  EXPECT_EQ(result.reason, Reason::active);
  EXPECT_EQ(result.profile.max_threadgroup_memory, 32768u);
}

TEST(ParseConfig, MalformedThreadgroupMemoryMakesTheShimInert) {
  for (const char* text : {"64k", " 65536", "-1", "18446744073709551616"}) {
    Environment env = with_ceiling("1009");
    env.max_threadgroup_memory = text;
    EXPECT_EQ(parse_config(env).reason, Reason::max_threadgroup_memory_malformed) << text;
  }
}

TEST(ParseConfig, WorkingSetIsRaisedOnlyWhenSet) {
  EXPECT_FALSE(parse_config(with_ceiling("1009")).profile.recommended_working_set.has_value());
  Environment env = with_ceiling("1009");
  env.recommended_working_set = "12009492480";
  const ConfigResult result = parse_config(env);
  EXPECT_EQ(result.reason, Reason::active);
  EXPECT_EQ(result.profile.recommended_working_set, std::optional<std::uint64_t>(12009492480u));
}

TEST(ParseConfig, MalformedWorkingSetMakesTheShimInert) {
  for (const char* text : {"12GB", "1e10", "0x"}) {
    Environment env = with_ceiling("1009");
    env.recommended_working_set = text;
    EXPECT_EQ(parse_config(env).reason, Reason::working_set_size_malformed) << text;
  }
}

TEST(ParseConfig, EmptyOptionalVariablesAreUnset) {
  Environment env = with_ceiling("1009");
  env.max_threadgroup_memory = "";
  env.recommended_working_set = "";
  const ConfigResult result = parse_config(env);
  EXPECT_EQ(result.reason, Reason::active);
  EXPECT_EQ(result.profile.max_threadgroup_memory, k_default_max_threadgroup_memory);
  EXPECT_FALSE(result.profile.recommended_working_set.has_value());
}

TEST(ParseConfig, TheCeilingIsCheckedBeforeTheLimits) {
  Environment env = with_ceiling("2000");
  env.max_threadgroup_memory = "junk";
  EXPECT_EQ(parse_config(env).reason, Reason::apple_family_max_out_of_range);
}

TEST(KillSwitch, OnlyExactlyOneDisables) {
  struct Case {
    std::optional<std::string_view> value;
    bool disabled;
  };
  const Case cases[] = {{std::nullopt, false},
                        {"1", true},
                        {"0", false},
                        {"", false},
                        {"true", false},
                        {" 1", false},
                        {"1 ", false},
                        {"01", false}};
  for (const Case& c : cases) {
    Environment env;
    env.disable = c.value;
    EXPECT_EQ(kill_switch_set(env), c.disabled) << std::string(c.value.value_or("(unset)"));
  }
}

TEST(Reason, NamesAndDescriptionsAreStable) {
  EXPECT_STREQ(reason_name(Reason::active), "active");
  EXPECT_STREQ(reason_name(Reason::disabled), "disabled");
  EXPECT_STREQ(reason_name(Reason::apple_family_max_out_of_range), "apple_family_max_out_of_range");
  EXPECT_STREQ(reason_name(Reason::executable_not_enabled), "executable_not_enabled");
  EXPECT_STREQ(reason_name(Reason::private_init_missing), "private_init_missing");
  EXPECT_STREQ(reason_name(Reason::device_hooks_incomplete), "device_hooks_incomplete");
  EXPECT_STREQ(reason_name(static_cast<Reason>(999)), "unknown");
  EXPECT_STREQ(reason_description(Reason::apple_family_max_out_of_range),
               "LUME_METAL_APPLE_FAMILY_MAX must be 1001..1999");
  EXPECT_STREQ(reason_description(Reason::enablement_unreadable),
               "the file named by LUME_UNLOCK_ENABLEMENT cannot be read");
}

} // namespace
} // namespace lume_unlock::policy
