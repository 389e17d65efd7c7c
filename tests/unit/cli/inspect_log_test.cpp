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
                                      "failure_count",
                                      "failures",
                                      "gpu_name",
                                      "metal_family",
                                      "reasons",
                                      "residency_sets",
                                      "run",
                                      "shim",
                                      "shim_failure",
                                      "simdgroup_matrix",
                                      "simdgroup_reduction",
                                      "tensor",
                                      "verdict"}));
  EXPECT_EQ(doc["shim"],
            (nlohmann::json{
                {"present", true}, {"apple_family_max", 1009}, {"max_threadgroup_memory", 65536}}));
  EXPECT_EQ(doc["verdict"], "fast");
  EXPECT_TRUE(doc["metal_family"].is_null());
  EXPECT_EQ(doc["run"],
            (nlohmann::json{{"line", 1}, {"process", "llama-server"}, {"earlier_runs", 0}}));
  EXPECT_EQ(doc["failures"], nlohmann::json::array());
  EXPECT_TRUE(doc["shim_failure"].is_null());
}

TEST(InspectLog, BrokenLogExitsSixNamingTheLineAndTheFix) {
  auto r = run({"inspect-log", log_path("broken-residency-set.stderr")});
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_EQ(r.out.rfind("verdict: broken\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("  line 19 'ggml_metal_buffer_map: error: failed to initialize residency "
                       "set' in llama-server: Metal could not make a residency set on this "
                       "device; set env: {GGML_METAL_NO_RESIDENCY: \"1\"} on the enablement "
                       "entry that runs llama-server\n"),
            std::string::npos)
      << r.out;
  // The capability block was read too: a fast run that failed.
  EXPECT_NE(r.out.find("simdgroup matrix:     true\n"), std::string::npos) << r.out;

  auto json = run({"--json", "inspect-log", log_path("broken-command-buffer.stderr")});
  EXPECT_EQ(json.exit_code, 6) << json.err;
  auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["verdict"], "broken");
  EXPECT_EQ(doc["failures"][0]["kind"], "command-buffer");
  EXPECT_EQ(doc["failures"][0]["line"], 21);
  EXPECT_EQ(doc["failures"][0]["text"],
            "ggml_metal_synchronize: error: command buffer 1 failed with status 5");
  EXPECT_EQ(doc["run"]["process"], "llama-bench");
}

TEST(InspectLog, TheLastRunIsReadAndNamed) {
  auto r = run({"inspect-log", log_path("two-runs-restarted.stderr")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("verdict: fast\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("  read the last run in the file, from line 21 (llama-server); 1 earlier "
                       "run (restarts appended to the same log) not read\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("residency sets:       false\n"), std::string::npos) << r.out;
}

TEST(InspectLog, SuccessLineWithoutTheBlockIsShimEnabledNotNoMetalLog) {
  auto r = run({"inspect-log", "--expect-shim", log_path("server-shim-enabled.stderr")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "verdict: shim-enabled\n"
            "  line 1: the shim reports its hooks in place in llama-server, but llama.cpp's "
            "verbosity hid ggml's capability block (llama-server prints it at no log level since "
            "llama.cpp PR #23021); 'lume-unlock bench' runs llama-bench, which prints it\n"
            "shim:                 lume-unlock shim enabled for llama-server "
            "(appleFamilyMax=1009, maxThreadgroupMemory=65536)\n");
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

TEST(InspectLog, EveryVerdictButBrokenExitsZero) {
  for (const char* name : {"cpu-only.stderr",
                           "broad-profile.stderr",
                           "partial-metal3.stderr",
                           "shim-inert-message.stderr",
                           "shim-not-enabled.stderr",
                           "server-shim-enabled.stderr"}) {
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
