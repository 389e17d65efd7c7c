#include "support/cli_run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <vector>

namespace lume_unlock::cli {
namespace {

using test::CliRun;

test::CliRun run(const std::vector<std::string>& args) {
  return test::run_lume_unlock(args);
}

std::string log_path(const std::string& name) {
  return std::string(LUME_UNLOCK_FIXTURES_DIR) + "/llama-logs/" + name;
}

TEST(InspectLog, JsonHasExactlyTheContractKeys) {
  auto r = run({"inspect-log", log_path("unlocked-lume-unlock-shim.stderr"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  std::vector<std::string> keys;
  for (const auto& item : doc.items()) {
    keys.push_back(item.key());
  }
  EXPECT_EQ(keys,
            (std::vector<std::string>{"apple_family",
                                      "bfloat",
                                      "common_family",
                                      "gpu_name",
                                      "metal_family",
                                      "residency_sets",
                                      "shim",
                                      "simdgroup_matrix",
                                      "simdgroup_reduction",
                                      "tensor",
                                      "verdict"}));
  EXPECT_EQ(doc["shim"],
            (nlohmann::json{
                {"present", true}, {"apple_family_max", 1009}, {"max_threadgroup_memory", 65536}}));
  EXPECT_EQ(doc["verdict"], "fast");
  EXPECT_TRUE(doc["metal_family"].is_null());
}

TEST(InspectLog, HumanReportForTheStockGuest) {
  auto r = run({"inspect-log", log_path("stock-guest.stderr")});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "verdict: stock\n"
            "  SIMD-group reduction is off: llama.cpp runs matrix multiplication and normalisation "
            "on the CPU\n"
            "GPU name:             Apple Paravirtual device\n"
            "Apple family:         1005\n"
            "Common family:        3003\n"
            "Metal family:         (none)\n"
            "simdgroup reduction:  false\n"
            "simdgroup matrix:     false\n"
            "bfloat:               false\n"
            "tensor:               false\n"
            "residency sets:       true\n"
            "shim:                 (no activation line)\n");
  EXPECT_EQ(r.err, "");
}

TEST(InspectLog, HumanReportNamesTheShim) {
  auto r = run({"inspect-log", log_path("unlocked-cua-nslog.stderr")});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(
      r.out.find("shim:                 Cua shim (LumeMetalCapabilities) enabled for llama-bench "
                 "(appleFamilyMax=1009, maxThreadgroupMemory=65536)\n"),
      std::string::npos)
      << r.out;
}

TEST(InspectLog, ExpectShimTurnsStockIntoShimInactive) {
  auto without = run({"--json", "inspect-log", log_path("stock-guest.stderr")});
  auto with = run({"--json", "inspect-log", "--expect-shim", log_path("stock-guest.stderr")});
  EXPECT_EQ(without.exit_code, 0);
  EXPECT_EQ(with.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(without.out)["verdict"], "stock");
  EXPECT_EQ(nlohmann::json::parse(with.out)["verdict"], "shim-inactive");
}

TEST(InspectLog, EveryVerdictExitsZero) {
  for (const char* name : {"cpu-only.stderr",
                           "broad-profile.stderr",
                           "partial-metal3.stderr",
                           "shim-inert-message.stderr"}) {
    auto r = run({"inspect-log", log_path(name)});
    EXPECT_EQ(r.exit_code, 0) << name << r.err;
  }
  EXPECT_EQ(run({"inspect-log", log_path("cpu-only.stderr")}).out,
            "verdict: no-metal-log\n"
            "  the log has no llama.cpp Metal init lines (ggml_metal_…: GPU name, GPU family, "
            "simdgroup …)\n"
            "shim:                 (no activation line)\n");
}

TEST(InspectLog, UnreadableFileIsBadInput) {
  auto r = run({"inspect-log", "/nonexistent/llama.stderr"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "lume-unlock: error: cannot inspect log: cannot read '/nonexistent/llama.stderr': No "
            "such file or "
            "directory\n"
            "hint: capture llama.cpp's stderr into a file (2> llama.stderr) and pass its path\n");
}

TEST(InspectLog, MissingFileArgumentIsBadUsage) {
  EXPECT_EQ(run({"inspect-log"}).exit_code, 2);
}

} // namespace
} // namespace lume_unlock::cli
