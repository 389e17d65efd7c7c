#include "apply/probe.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::apply {
namespace {

using nlohmann::json;

/// A probe document: Apple families true through `apple_max`, Common 3001-3003 true, the rest
/// false; `overrides` set single answers.
json probe(int apple_max,
           std::uint64_t threadgroup,
           const std::string& state,
           const std::map<std::string, bool>& overrides = {},
           bool residency = false) {
  json families = json::object();
  for (int code = 1001; code <= 1010; ++code) {
    families[std::to_string(code)] = code <= apple_max;
  }
  for (const char* code : {"2001", "2002", "4001", "4002", "5001", "5002"}) {
    families[code] = false;
  }
  for (const char* code : {"3001", "3002", "3003"}) {
    families[code] = true;
  }
  for (const auto& [code, answer] : overrides) {
    families[code] = answer;
  }
  return {{"process", "lume-unlock-probe"},
          {"shim", {{"state", state}, {"reason", state == "active" ? "active" : "disabled"}}},
          {"families", families},
          {"max_threadgroup_memory", threadgroup},
          {"mlx", {{"residency_sets", residency}}}};
}

const json k_stock = probe(1005, 32768, "absent");

TEST(ProbeCheck, TheSafeProfilePassesAndListsTheChangedAppleFamilies) {
  const auto verdict = judge_probe(k_stock, probe(1009, 65536, "active"), {1009, 65536});
  EXPECT_TRUE(verdict.ok()) << verdict.problems.front();
  EXPECT_EQ(verdict.changed_families, (std::vector<std::string>{"1006", "1007", "1008", "1009"}));
  EXPECT_EQ(verdict.stock_threadgroup_memory, 32768u);
  EXPECT_EQ(verdict.unlocked_threadgroup_memory, 65536u);
}

TEST(ProbeCheck, AMissingPrivateInitIsNamedWithWhatItMeans) {
  json unlocked = probe(1005, 32768, "inert");
  unlocked["shim"]["reason"] = "private_init_missing";
  const auto verdict = judge_probe(k_stock, unlocked, {1009, 65536});
  ASSERT_EQ(verdict.problems.size(), 6u);
  EXPECT_EQ(verdict.problems[4],
            "the shim is inert in the unlocked probe run (private_init_missing): this macOS has "
            "no -[_MTLDevice initGPUFamilySupport], the one way in of the certified build, so the "
            "shim leaves the device stock");
}

TEST(ProbeCheck, EachBrokenRuleIsOneNamedProblem) {
  struct Case {
    const char* name;
    json unlocked;
    std::vector<std::string> problems;
  };
  const std::vector<Case> cases = {
      {"inert shim",
       probe(1005, 32768, "inert"),
       {"Apple family 1006 answered false with the shim (expected true through 1009)",
        "Apple family 1007 answered false with the shim (expected true through 1009)",
        "Apple family 1008 answered false with the shim (expected true through 1009)",
        "Apple family 1009 answered false with the shim (expected true through 1009)",
        "the shim is inert in the unlocked probe run (disabled)",
        "max_threadgroup_memory is 32768 with the shim (expected at least 65536)"}},
      {"ceiling too high",
       probe(1010, 65536, "active"),
       {"Apple family 1010 answered true with the shim (the ceiling is 1009)"}},
      {"Metal3 leaked",
       probe(1009, 65536, "active", {{"5001", true}}, true),
       {"family 5001 answered true with the shim but false stock (only Apple families may "
        "change)",
        "MLX would use residency sets with the shim (a Metal family answer leaked)"}},
      {"Common lowered",
       probe(1009, 65536, "active", {{"3003", false}}),
       {"family 3003 answered false with the shim but true stock (only Apple families may "
        "change)"}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(judge_probe(k_stock, c.unlocked, {1009, 65536}).problems, c.problems) << c.name;
  }
}

TEST(ProbeCheck, RequirePassIsAVerificationErrorNamingTheFirstProblem) {
  const auto verdict = judge_probe(k_stock, probe(1005, 32768, "inert"), {1009, 65536});
  const Status status = require_probe_pass(verdict, "vm1");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().category(), ErrorCategory::verification);
  EXPECT_EQ(status.error().message(),
            "probe check in VM 'vm1': Apple family 1006 answered false with the shim (expected "
            "true through 1009) (and 5 more problems)");
  EXPECT_TRUE(
      require_probe_pass(judge_probe(k_stock, probe(1009, 65536, "active"), {1009, 65536}), "vm1")
          .ok());
}

TEST(ProbeCheck, AnExternalShimIsJudgedByTheDevicesAnswersNotItsState) {
  // Upstream's dylib exports no lume_unlock_shim_state: the probe says "absent" while loaded.
  const auto loaded = judge_probe(k_stock, probe(1009, 65536, "absent"), {1009, 65536}, false);
  EXPECT_TRUE(loaded.ok()) << loaded.problems.front();
  EXPECT_EQ(loaded.changed_families, (std::vector<std::string>{"1006", "1007", "1008", "1009"}));
  // Not loaded at all: the stock answers fail it, and no claim about a state is made.
  const auto missing = judge_probe(k_stock, probe(1005, 32768, "absent"), {1009, 65536}, false);
  EXPECT_EQ(missing.problems,
            (std::vector<std::string>{
                "Apple family 1006 answered false with the shim (expected true through 1009)",
                "Apple family 1007 answered false with the shim (expected true through 1009)",
                "Apple family 1008 answered false with the shim (expected true through 1009)",
                "Apple family 1009 answered false with the shim (expected true through 1009)",
                "max_threadgroup_memory is 32768 with the shim (expected at least 65536)"}));
  // Our own shim still has to say it is active.
  EXPECT_FALSE(judge_probe(k_stock, probe(1009, 65536, "absent"), {1009, 65536}).ok());
}

TEST(ProbeCheck, NoDocumentIsAProblem) {
  EXPECT_EQ(judge_probe(json(), json(), {}).problems,
            std::vector<std::string>{"the probe printed no JSON document"});
}

} // namespace
} // namespace lume_unlock::apply
