#include "probe/report.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace lume_unlock::probe {
namespace {

Report stock_guest() {
  Report r;
  r.process = "lume-unlock-probe";
  r.arch = "arm64";
  r.device = "Apple Paravirtual device";
  for (long code : probe_family_codes()) {
    const bool yes = (code >= 1001 && code <= 1005) || (code >= 3001 && code <= 3003);
    r.families.push_back({code, yes});
  }
  r.max_threadgroup_memory = 32768;
  r.recommended_max_working_set_size = 11453250000u;
  return r;
}

Report unlocked_guest() {
  Report r = stock_guest();
  for (FamilyAnswer& a : r.families) {
    if (a.code >= 1001 && a.code <= 1009)
      a.supported = true;
  }
  r.max_threadgroup_memory = 65536;
  r.shim.state = ShimState::active;
  r.shim.reason = "active";
  r.shim.apple_family_max = 1009;
  r.shim.max_threadgroup_memory = 65536;
  return r;
}

TEST(ProbeReport, AsksTheNineteenFamiliesInOrder) {
  const std::array<long, 19> expected = {1001,
                                         1002,
                                         1003,
                                         1004,
                                         1005,
                                         1006,
                                         1007,
                                         1008,
                                         1009,
                                         1010,
                                         2001,
                                         2002,
                                         3001,
                                         3002,
                                         3003,
                                         4001,
                                         4002,
                                         5001,
                                         5002};
  EXPECT_EQ(probe_family_codes(), expected);
}

TEST(ProbeReport, StockGuestJsonMatchesTheContract) {
  EXPECT_EQ(
      render_json(stock_guest()),
      R"({"process":"lume-unlock-probe","arch":"arm64",)"
      R"("shim":{"state":"absent","reason":"not_loaded","apple_family_max":null,"max_threadgroup_memory":null,"children":null},)"
      R"("device":"Apple Paravirtual device",)"
      R"("families":{"1001":true,"1002":true,"1003":true,"1004":true,"1005":true,"1006":false,)"
      R"("1007":false,"1008":false,"1009":false,"1010":false,"2001":false,"2002":false,"3001":true,)"
      R"("3002":true,"3003":true,"4001":false,"4002":false,"5001":false,"5002":false},)"
      R"("max_threadgroup_memory":32768,"recommended_max_working_set_size":11453250000,)"
      R"("llama_cpp":{"simdgroup_reduction":false,"simdgroup_matrix":false,"bfloat":false},)"
      R"("mlx":{"residency_sets":false}})"
      "\n");
}

TEST(ProbeReport, UnlockedGuestDerivesLlamaCppFlagsButNotResidencySets) {
  const nlohmann::json doc = nlohmann::json::parse(render_json(unlocked_guest()));
  EXPECT_EQ(
      doc["shim"],
      nlohmann::json::parse(
          R"({"state":"active","reason":"active","apple_family_max":1009,"max_threadgroup_memory":65536,"children":null})"));
  EXPECT_EQ(doc["llama_cpp"],
            nlohmann::json::parse(
                R"({"simdgroup_reduction":true,"simdgroup_matrix":true,"bfloat":true})"));
  EXPECT_EQ(doc["mlx"]["residency_sets"], false);
}

TEST(ProbeReport, DerivedFlagsFollowLlamaCppsRules) {
  struct Case {
    const char* name;
    std::vector<long> true_codes;
    Derived expected;
  };
  const Case cases[] = {
      {"nothing", {}, {false, false, false, false}},
      {"apple6 gives bfloat only", {1006}, {false, false, true, false}},
      {"apple7 gives reduction and matrix", {1007}, {true, true, false, false}},
      {"metal3 gives reduction, bfloat and residency", {5001}, {true, false, true, true}},
      {"metal4 alone gives nothing here", {5002}, {false, false, false, false}},
  };
  for (const Case& c : cases) {
    Report r;
    for (long code : probe_family_codes()) {
      bool yes = false;
      for (long t : c.true_codes)
        yes = yes || t == code;
      r.families.push_back({code, yes});
    }
    const Derived d = derive(r);
    EXPECT_EQ(d.simdgroup_reduction, c.expected.simdgroup_reduction) << c.name;
    EXPECT_EQ(d.simdgroup_matrix, c.expected.simdgroup_matrix) << c.name;
    EXPECT_EQ(d.bfloat, c.expected.bfloat) << c.name;
    EXPECT_EQ(d.residency_sets, c.expected.residency_sets) << c.name;
  }
}

TEST(ProbeReport, ShimStatusFromTheExportedState) {
  EXPECT_EQ(shim_status_from(nullptr).state, ShimState::absent);
  EXPECT_EQ(shim_status_from(nullptr).reason, "not_loaded");

  lume_unlock_shim_state_v1 inert{};
  inert.state = LUME_UNLOCK_SHIM_INERT;
  inert.reason = 4;
  inert.reason_name = "apple_family_max_out_of_range";
  const ShimStatus s = shim_status_from(&inert);
  EXPECT_EQ(s.state, ShimState::inert);
  EXPECT_EQ(s.reason, "apple_family_max_out_of_range");
  EXPECT_FALSE(s.apple_family_max.has_value());

  lume_unlock_shim_state_v1 active{};
  active.state = LUME_UNLOCK_SHIM_ACTIVE;
  active.reason_name = "active";
  active.apple_family_max = 1007;
  active.max_threadgroup_memory = 32768;
  const ShimStatus a = shim_status_from(&active);
  EXPECT_EQ(a.state, ShimState::active);
  EXPECT_EQ(a.apple_family_max, std::optional<std::uint64_t>(1007));
  EXPECT_EQ(a.max_threadgroup_memory, std::optional<std::uint64_t>(32768));
  EXPECT_FALSE(a.children_inherit.has_value()); // a version 1 state does not say

  active.version = 2;
  active.children_inherit = 1;
  EXPECT_EQ(shim_status_from(&active).children_inherit, std::optional<bool>(true));
  active.children_inherit = 0;
  EXPECT_EQ(shim_status_from(&active).children_inherit, std::optional<bool>(false));
}

TEST(ProbeReport, ChildrenRuleIsNamed) {
  Report r = unlocked_guest();
  r.shim.children_inherit = true;
  EXPECT_EQ(nlohmann::json::parse(render_json(r))["shim"]["children"], "inherit");
  EXPECT_NE(render_text(r).find("shim: active (appleFamilyMax=1009 maxThreadgroupMemory=65536); "
                                "children inherit it\n"),
            std::string::npos);
  r.shim.children_inherit = false;
  EXPECT_EQ(nlohmann::json::parse(render_json(r))["shim"]["children"], "removed");
  EXPECT_NE(render_text(r).find("; children start without it\n"), std::string::npos);
}

TEST(ProbeReport, TextNamesEveryFact) {
  const std::string text = render_text(unlocked_guest());
  EXPECT_NE(text.find("process: lume-unlock-probe\n"), std::string::npos);
  EXPECT_NE(text.find("shim: active (appleFamilyMax=1009 maxThreadgroupMemory=65536)\n"),
            std::string::npos);
  EXPECT_NE(text.find("device: Apple Paravirtual device\n"), std::string::npos);
  EXPECT_NE(text.find("supportsFamily 1009: true\n"), std::string::npos);
  EXPECT_NE(text.find("supportsFamily 5001: false\n"), std::string::npos);
  EXPECT_NE(text.find("maxThreadgroupMemoryLength: 65536\n"), std::string::npos);
  EXPECT_NE(text.find("recommendedMaxWorkingSetSize: 11453250000 (11453.25 MB)\n"),
            std::string::npos);
  EXPECT_NE(text.find("llama.cpp: simdgroup_reduction=true simdgroup_matrix=true bfloat=true\n"),
            std::string::npos);
  EXPECT_NE(text.find("mlx: residency_sets=false\n"), std::string::npos);
}

TEST(ProbeReport, NoDeviceRendersNull) {
  Report r;
  r.process = "lume-unlock-probe";
  r.arch = "x86_64";
  const nlohmann::json doc = nlohmann::json::parse(render_json(r));
  EXPECT_TRUE(doc["device"].is_null());
  EXPECT_TRUE(doc["families"].empty());
  EXPECT_NE(render_text(r).find("device: (none)\n"), std::string::npos);
}

} // namespace
} // namespace lume_unlock::probe
