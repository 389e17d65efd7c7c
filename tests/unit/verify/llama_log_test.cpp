#include "support/evidence.hpp"
#include "util/atomic_file.hpp"
#include "verify/llama_log.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::verify {
namespace {

using nlohmann::json;

std::string fixture(const std::string& name) {
  auto text = util::read_file(std::string(LUME_UNLOCK_FIXTURES_DIR) + "/llama-logs/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? text.value() : std::string();
}

/// The whole JSON document, so every field is asserted at once.
json expected(const char* verdict,
              json gpu,
              json apple,
              json common,
              json metal,
              json reduction,
              json matrix,
              json bfloat,
              json tensor,
              json residency,
              json shim_present,
              json apple_max,
              json tg_memory) {
  return {{"verdict", verdict},
          {"gpu_name", gpu},
          {"apple_family", apple},
          {"common_family", common},
          {"metal_family", metal},
          {"simdgroup_reduction", reduction},
          {"simdgroup_matrix", matrix},
          {"bfloat", bfloat},
          {"tensor", tensor},
          {"residency_sets", residency},
          {"shim",
           {{"present", shim_present},
            {"apple_family_max", apple_max},
            {"max_threadgroup_memory", tg_memory}}}};
}

/// The capability part of the document: what these cases assert (the run, failure and reason
/// keys have their own tests in llama_log_failure_test.cpp).
json capability_document(json document) {
  for (const char* key : {"run", "failures", "failure_count", "shim_failure", "reasons"}) {
    document.erase(key);
  }
  return document;
}

struct FixtureCase {
  const char* file;
  bool expect_shim;
  json document;
};

TEST(LlamaLog, EveryFixtureClassifiesWithEveryField) {
  const json null;
  const std::string pv = "Apple Paravirtual device";
  // clang-format off: one case per line reads as a table
  const FixtureCase cases[] = {
      {"stock-guest.stderr",
       false,
       expected(
           "stock", pv, 1005, 3003, null, false, false, false, false, true, false, null, null)},
      {"stock-guest.stderr",
       true,
       expected("shim-inactive",
                pv,
                1005,
                3003,
                null,
                false,
                false,
                false,
                false,
                true,
                false,
                null,
                null)},
      {"unlocked-lume-unlock-shim.stderr",
       false,
       expected("fast", pv, 1009, 3003, null, true, true, true, false, true, true, 1009, 65536)},
      {"unlocked-lume-unlock-shim.stderr",
       true,
       expected("fast", pv, 1009, 3003, null, true, true, true, false, true, true, 1009, 65536)},
      {"unlocked-cua-nslog.stderr",
       false,
       expected("fast", pv, 1009, 3003, null, true, true, true, false, true, true, 1009, 65536)},
      {"unlocked-cua-plain.stderr",
       false,
       expected("fast", pv, 1007, 3003, null, true, true, true, false, false, true, 1007, 32768)},
      {"host-m2-max.stderr",
       false,
       expected("fast",
                "Apple M2 Max",
                1008,
                3003,
                5002,
                true,
                true,
                true,
                false,
                true,
                false,
                null,
                null)},
      {"broad-profile.stderr",
       false,
       expected("unsafe-profile",
                pv,
                1021,
                3006,
                5002,
                true,
                true,
                true,
                false,
                true,
                true,
                null,
                65536)},
      {"metal-line-with-shim.stderr",
       false,
       expected("unsafe-profile",
                pv,
                1009,
                3003,
                5001,
                true,
                true,
                true,
                false,
                true,
                true,
                1009,
                65536)},
      {"partial-metal3.stderr",
       false,
       expected(
           "partial", pv, 1005, 3003, 5001, true, false, true, false, true, false, null, null)},
      {"era-2024-support-suffix.stderr",
       false,
       expected("fast",
                "Apple M1 Max",
                1007,
                3003,
                5001,
                true,
                true,
                null,
                null,
                null,
                false,
                null,
                null)},
      {"era-2025-has-residency.stderr",
       false,
       expected("fast",
                "Apple M2 Pro",
                1008,
                3003,
                5001,
                true,
                true,
                true,
                null,
                true,
                false,
                null,
                null)},
      {"era-2026-bare-mtl0.stderr",
       false,
       expected("fast", null, 1009, 3003, null, true, true, true, false, false, true, 1009, 65536)},
      {"shim-inert-message.stderr",
       false,
       expected("shim-inactive",
                pv,
                1005,
                3003,
                null,
                false,
                false,
                false,
                false,
                true,
                false,
                null,
                null)},
      {"mlx-broad-profile.stderr",
       false,
       expected("unsafe-profile",
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                true,
                null,
                65536)},
      {"cpu-only.stderr",
       false,
       expected("no-metal-log",
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                false,
                null,
                null)},
      {"cpu-only.stderr",
       true,
       expected("no-metal-log",
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                false,
                null,
                null)},
  };
  // clang-format on
  for (const auto& c : cases) {
    LlamaLogOptions options;
    options.expect_shim = c.expect_shim;
    auto report = classify_llama_log(fixture(c.file), options);
    EXPECT_EQ(capability_document(to_json(report)), c.document)
        << c.file << (c.expect_shim ? " --expect-shim" : "") << "\n"
        << to_json(report).dump(2);
  }
}

TEST(LlamaLog, ShimLinesAreToldApart) {
  struct Case {
    const char* file;
    ShimKind kind;
    const char* process;
  };
  const Case cases[] = {
      {"unlocked-lume-unlock-shim.stderr", ShimKind::lume_unlock, "llama-server"},
      {"unlocked-cua-nslog.stderr", ShimKind::cua, "llama-bench"},
      {"unlocked-cua-plain.stderr", ShimKind::cua, "llama-bench"},
      {"broad-profile.stderr", ShimKind::cua_broad, "llama-bench"},
      {"era-2026-bare-mtl0.stderr", ShimKind::lume_unlock, "llama-bench"},
  };
  for (const auto& c : cases) {
    auto report = classify_llama_log(fixture(c.file));
    ASSERT_TRUE(report.shim.has_value()) << c.file;
    EXPECT_EQ(report.shim->kind, c.kind) << c.file;
    EXPECT_EQ(report.shim->process, c.process) << c.file;
  }
  auto broad = classify_llama_log(fixture("broad-profile.stderr"));
  EXPECT_EQ(broad.shim->family_max, 5001);
  EXPECT_EQ(broad.shim->feature_profile, 10);
}

TEST(LlamaLog, ReasonsExplainTheVerdict) {
  auto broad = classify_llama_log(fixture("broad-profile.stderr"));
  EXPECT_EQ(
      broad.reasons,
      (std::vector<std::string>{
          "Apple family 1021 is above 1010, which no Apple GPU reports: a blanket-true family hook",
          "Common family 3006 is above 3003, which no SDK defines: a blanket-true family hook",
          "the shim line is the superseded broad research build (familyMax/featureProfile)",
          "Metal family 5002 is reported on a shimmed virtual device: MLX would then use residency "
          "sets and "
          "fail"}));
  auto inert = classify_llama_log(fixture("shim-inert-message.stderr"));
  ASSERT_EQ(inert.reasons.size(), 2u);
  EXPECT_EQ(inert.reasons[1],
            "the shim said: inert for llama-bench: LUME_METAL_APPLE_FAMILY_MAX=2001 is outside "
            "1001..1999");
  auto shimmed = classify_llama_log(fixture("unlocked-lume-unlock-shim.stderr"));
  EXPECT_EQ(
      shimmed.reasons.back(),
      "attributable to the shim: the Apple family equals appleFamilyMax on the paravirtual device");
}

TEST(LlamaLog, CuaFailureMessagesMeanInjectionHappened) {
  auto text = "2026-09-14 09:00:00.000 llama-bench[1:2] [LumeMetalCapabilities] Required device "
              "methods are "
              "unavailable; leaving stock capabilities unchanged\n" +
              fixture("stock-guest.stderr");
  auto report = classify_llama_log(text);
  EXPECT_EQ(report.verdict, LlamaLogVerdict::shim_inactive);
  EXPECT_FALSE(report.shim.has_value());
  ASSERT_TRUE(report.shim_failure.has_value());
  EXPECT_EQ(report.shim_failure->reason,
            "Required device methods are unavailable; leaving stock capabilities unchanged");
  EXPECT_EQ(report.shim_failure->process, "llama-bench");
}

TEST(LlamaLog, ShimLineWithStockFlagsIsStockWithAWarning) {
  auto text = "[lume-unlock-shim] enabled for llama-bench (appleFamilyMax=1009 "
              "maxThreadgroupMemory=65536)\n" +
              fixture("stock-guest.stderr");
  auto report = classify_llama_log(text, LlamaLogOptions{true});
  EXPECT_EQ(report.verdict, LlamaLogVerdict::stock);
  EXPECT_EQ(report.reasons.back(),
            "a shim activation line is present, yet llama.cpp saw the stock answers");
}

TEST(LlamaLog, FlagsFollowTheFamiliesWhenTheirLinesAreMissing) {
  auto report = classify_llama_log("ggml_metal_init: GPU family: MTLGPUFamilyApple7  (1007)\n");
  EXPECT_EQ(report.verdict, LlamaLogVerdict::fast);
  EXPECT_FALSE(report.simdgroup_reduction.has_value());
  auto old = classify_llama_log("ggml_metal_init: GPU family: MTLGPUFamilyApple5\n");
  EXPECT_EQ(old.apple_family, 1005); // code derived from the label when the parentheses are missing
  EXPECT_EQ(old.verdict, LlamaLogVerdict::stock);
}

TEST(LlamaLog, LinesFromOtherBackendsAreIgnored) {
  auto report =
      classify_llama_log("ggml_vulkan: GPU name: AMD Radeon\nsimdgroup reduction = true\n");
  EXPECT_EQ(report.verdict, LlamaLogVerdict::no_metal_log);
  EXPECT_FALSE(report.gpu_name.has_value());
}

TEST(LlamaLog, VerdictNamesAreTheContract) {
  EXPECT_STREQ(verdict_name(LlamaLogVerdict::fast), "fast");
  EXPECT_STREQ(verdict_name(LlamaLogVerdict::partial), "partial");
  EXPECT_STREQ(verdict_name(LlamaLogVerdict::stock), "stock");
  EXPECT_STREQ(verdict_name(LlamaLogVerdict::unsafe_profile), "unsafe-profile");
  EXPECT_STREQ(verdict_name(LlamaLogVerdict::shim_inactive), "shim-inactive");
  EXPECT_STREQ(verdict_name(LlamaLogVerdict::no_metal_log), "no-metal-log");
  EXPECT_STREQ(verdict_name(LlamaLogVerdict::broken), "broken");
  EXPECT_STREQ(verdict_name(LlamaLogVerdict::shim_enabled), "shim-enabled");
}

TEST(LlamaLog, PublishedEvidenceLogsClassifyAsPublished) {
  const json null;
  const std::string pv = "Apple Paravirtual device";
  // clang-format off: one case per line reads as a table
  const std::pair<const char*, json> cases[] = {
      {"tiny-stock-minimal.stderr",
       expected(
           "stock", pv, 1005, 3003, null, false, false, false, false, true, false, null, null)},
      {"tiny-safe-shim-10x-final.stderr",
       expected("fast", pv, 1009, 3003, null, true, true, true, false, true, true, 1009, 65536)},
      {"tiny-host-minimal.stderr",
       expected("fast",
                "Apple M1 Ultra",
                1007,
                3003,
                5002,
                true,
                true,
                true,
                false,
                true,
                false,
                null,
                null)},
      {"tiny-hooked-minimal.stderr",
       expected("unsafe-profile",
                pv,
                1021,
                3006,
                5002,
                true,
                true,
                true,
                false,
                true,
                true,
                null,
                65536)},
      {"mlx-broad-profile-failure.stderr",
       expected("unsafe-profile",
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                true,
                null,
                65536)},
  };
  // clang-format on
  int found = 0;
  for (const auto& [name, document] : cases) {
    auto path = test::find_evidence(name);
    if (!path) {
      continue;
    }
    ++found;
    auto text = util::read_file(*path);
    ASSERT_TRUE(text.ok()) << *path;
    EXPECT_EQ(capability_document(to_json(classify_llama_log(text.value()))), document) << *path;
  }
  if (found == 0) {
    GTEST_SKIP() << "the published evidence logs are not on this machine (looked under "
                 << test::evidence_places() << ")";
  }
  EXPECT_EQ(found, 5) << "some published logs are missing";
}

// Issue 15: each of these overflowed the stack inside std::regex (exit 139). The scanner reads them
// in one pass, and their fields come out as the short forms of the same lines would.
TEST(LlamaLog, HugeLinesClassifyWithoutCrashing) {
  const std::string long_tail(30000, 'x');
  auto report = classify_llama_log("ggml_metal_init: " + long_tail + "\n");
  EXPECT_EQ(report.verdict, LlamaLogVerdict::no_metal_log);

  std::string flag_label;
  for (int i = 0; i < 30000; ++i) {
    flag_label += "a ";
  }
  report = classify_llama_log("ggml_metal_init: " + flag_label + "= true\n");
  EXPECT_EQ(report.verdict, LlamaLogVerdict::no_metal_log); // an unknown flag, read and ignored

  const std::string long_name(30000, 'a');
  report = classify_llama_log("ggml_metal_init: GPU name: MTL0 (" + long_name + ")\n" +
                              "ggml_metal_init: GPU family: MTLGPUFamilyApple7  (1007)\n");
  ASSERT_TRUE(report.gpu_name.has_value());
  EXPECT_EQ(*report.gpu_name, long_name);
  EXPECT_EQ(report.apple_family, 1007);
  EXPECT_EQ(report.verdict, LlamaLogVerdict::fast);
}

TEST(LlamaLog, OverlongMetalOrShimLinesAreRefusedNamingTheLine) {
  const std::string at_limit = "ggml_metal_init: " + std::string(k_max_metal_line_bytes - 17, 'x');
  ASSERT_EQ(at_limit.size(), k_max_metal_line_bytes);
  EXPECT_TRUE(check_llama_log_lines("main: start\n" + at_limit + "\n").ok());
  // Any other long line (a prompt echoed into the same stream) is not a reason to refuse.
  EXPECT_TRUE(check_llama_log_lines("main: " + std::string(100000, 'p') + "\n").ok());

  for (const std::string& line : {at_limit + "x",
                                  "[lume-unlock-shim] enabled for " + std::string(5000, 'n'),
                                  "[LumeMetalCapabilities] " + std::string(5000, 'n')}) {
    auto checked = check_llama_log_lines("main: start\r\nllama: load\n" + line);
    ASSERT_FALSE(checked.ok()) << line.substr(0, 40);
    EXPECT_EQ(checked.error().category(), ErrorCategory::usage);
    EXPECT_EQ(checked.error().why(),
              "line 3 is a Metal init or shim line of " + std::to_string(line.size()) +
                  " characters, more than the 4096 that llama.cpp or a shim ever writes");
  }
}

TEST(LlamaLog, ScannerKeepsTheLineGrammar) {
  // The shim line first, as a process writes it: a shim line after a block starts a new run.
  auto report = classify_llama_log(
      "[lume-unlock-shim] enabled for llama (appleFamilyMax =1009, maxThreadgroupMemory= "
      "0x10000)\n"
      "ggml_metal foo ggml_metal_device_init:  GPU name:   MTL0\n"
      "ggml_metal_init: GPU family: MTLGPUFamilyFoo1 MTLGPUFamilyCommon3 ( 3003 )\n"
      "ggml_metal_init: simdgroup reduction   = true \n"
      "ggml_metal_init: simdgroup\tmatrix mul. = true\n"
      "ggml_metal_init: has bfloat = maybe\n");
  EXPECT_FALSE(report.gpu_name.has_value()); // a bare "MTL0" names no GPU
  EXPECT_EQ(report.common_family, 3003);
  EXPECT_EQ(report.simdgroup_reduction, true);
  EXPECT_FALSE(report.simdgroup_matrix.has_value()); // a tab inside the label is not a label
  EXPECT_FALSE(report.bfloat.has_value());
  ASSERT_TRUE(report.shim.has_value());
  EXPECT_EQ(report.shim->apple_family_max, 1009);
  EXPECT_EQ(report.shim->max_threadgroup_memory, 65536);
}

} // namespace
} // namespace lume_unlock::verify
