// Metal's own failure lines, the shims' failure and success lines, and the run a log's verdict
// is read from (issue 43). The logs are composed from the format strings in docs/sources.md.
#include "util/atomic_file.hpp"
#include "verify/bench.hpp"
#include "verify/llama_log.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace lume_unlock::verify {
namespace {

using ::testing::HasSubstr;

std::string fixture(const std::string& name) {
  auto text = util::read_file(std::string(LUME_UNLOCK_FIXTURES_DIR) + "/llama-logs/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? text.value() : std::string();
}

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

bool reasons_mention(const LlamaLogReport& report, const std::string& words) {
  for (const auto& reason : report.reasons) {
    if (reason.find(words) != std::string::npos) {
      return true;
    }
  }
  return false;
}

TEST(LlamaLogFailure, EachFailureLineTurnsAFastRunBroken) {
  const std::string fast = fixture("unlocked-lume-unlock-shim.stderr");
  ASSERT_EQ(classify_llama_log(fast).verdict, LlamaLogVerdict::fast);
  const std::size_t shim_line_end = fast.find('\n') + 1;
  struct Case {
    const char* line;
    const char* kind;
    bool before_block; ///< written while the device is made, before the capability block
  };
  // ggml @ 4429529e, src/ggml-metal/: each GGML_LOG_ERROR format with its __func__.
  const Case cases[] = {
      {"ggml_metal_synchronize: error: command buffer 0 failed with status 5",
       "command-buffer",
       false},
      {"ggml_metal_graph_compute: backend is in error state from a previous command buffer "
       "failure - recreate the backend to recover",
       "error-state",
       false},
      {"ggml_metal_buffer_init: error: failed to initialize residency set", "residency-set", false},
      {"ggml_metal_buffer_map: error: failed to initialize residency set", "residency-set", false},
      {"ggml_metal_library_init: error: Error Domain=MTLLibraryErrorDomain Code=3",
       "library",
       true},
      {"ggml_metal_device_init: error: failed to create library", "library", true},
      {"ggml_metal_init: error: failed to initialize the Metal library", "library", false},
      // A kernel that could not be built, after the block (ggml-metal-device.m).
      {"ggml_metal_library_compile_pipeline: failed to compile pipeline: base = "
       "'kernel_mul_mm_f16_f32', name = 'kernel_mul_mm_f16_f32_bci=0_bco=1'",
       "pipeline",
       false},
      {"ggml_metal_library_compile_pipeline: failed to create pipeline state: base = "
       "'kernel_mul_mm_f16_f32', name = 'kernel_mul_mm_f16_f32_bci=0_bco=1'",
       "pipeline",
       false},
      {"ggml_metal_library_compile_pipeline: incompatible pipeline kernel_add", "pipeline", false},
      // No command queue: the device's own comes before its block, the context's after it.
      {"ggml_metal_device_init: error: failed to create command queue", "command-queue", true},
      {"ggml_metal_init: error: failed to create command queue", "command-queue", false},
      {"ggml_metal_buffer_init: error: failed to allocate buffer, size =  4096.00 MiB",
       "buffer",
       false},
      {"ggml_metal_buffer_get_id: error: tensor 'blk.0.attn_q.weight' buffer is nil",
       "buffer",
       false},
      // ggml-metal-ops.cpp, each followed by an abort.
      {"ggml_metal_op_encode_impl: error: unsupported op 'MUL_MAT'", "unsupported-op", false},
      {"ggml_metal_op_encode_impl: error: node  12, op =  MUL_MAT not implemented",
       "unsupported-op",
       false},
      // ggml_abort (ggml.c): "FILE:LINE: message", FILE one of the Metal backend's.
      {"/Users/runner/work/llama.cpp/llama.cpp/ggml/src/ggml-metal/ggml-metal-ops.cpp:203: "
       "unsupported op",
       "abort",
       false},
  };
  for (const auto& c : cases) {
    const std::string text =
        c.before_block ? fast.substr(0, shim_line_end) + c.line + "\n" + fast.substr(shim_line_end)
                       : fast + c.line + "\n";
    const std::size_t line = c.before_block ? 2 : line_count(fast) + 1;
    const auto report = classify_llama_log(text, LlamaLogOptions{true});
    EXPECT_EQ(report.verdict, LlamaLogVerdict::broken) << c.line;
    ASSERT_EQ(report.failures.size(), 1u) << c.line;
    EXPECT_EQ(report.failures[0].line, line) << c.line;
    EXPECT_EQ(report.failures[0].text, c.line);
    EXPECT_EQ(report.run.earlier_runs, 0u) << c.line;
    const auto document = to_json(report);
    EXPECT_EQ(document["verdict"], "broken");
    EXPECT_EQ(document["failures"][0]["kind"], c.kind) << c.line;
    EXPECT_EQ(document["failures"][0]["line"], line);
    EXPECT_EQ(document["failures"][0]["text"], c.line);
    EXPECT_EQ(document["run"]["process"], "llama-server");
    // The words name the line by number and text, and the process.
    EXPECT_TRUE(reasons_mention(
        report, "line " + std::to_string(line) + " '" + c.line + "' in llama-server"))
        << document.dump(2);
    // The capability fields are still read: the run was fast, and it failed.
    EXPECT_EQ(report.simdgroup_matrix, true);
    EXPECT_TRUE(unlocked_log_problem(report).has_value()) << c.line;
  }
}

TEST(LlamaLogFailure, BuildsBeforeTheMetalRefactorNameTheirFailuresFromOtherFunctions) {
  // ggml @ f05196c9^, src/ggml-metal/ggml-metal.m: the same words from ggml_backend_metal_*
  // functions, and the library loaded by ggml_metal_load_library inside ggml_metal_init.
  const std::string fast = fixture("era-2025-has-residency.stderr");
  ASSERT_EQ(classify_llama_log(fast).verdict, LlamaLogVerdict::fast);
  const std::size_t block_start = fast.find("ggml_metal_init: GPU name:");
  ASSERT_NE(block_start, std::string::npos);
  struct Case {
    const char* line;
    const char* kind;
    bool before_block;
  };
  const Case cases[] = {
      {"ggml_backend_metal_synchronize: error: command buffer 0 failed with status 5",
       "command-buffer",
       false},
      {"ggml_backend_metal_buffer_type_alloc_buffer: error: failed to initialize residency set",
       "residency-set",
       false},
      {"ggml_backend_metal_device_buffer_mapped: error: failed to initialize residency set",
       "residency-set",
       false},
      {"ggml_metal_load_library: error: Error Domain=MTLLibraryErrorDomain Code=3",
       "library",
       true},
      {"ggml_metal_init: error: metal library is nil", "library", true},
      // Builds before ggml 1d6388c1 (2025-03-11) loaded the library in ggml_metal_init itself.
      {"ggml_metal_init: error: Error Domain=MTLLibraryErrorDomain Code=3 \"program_source:1:10\"",
       "library",
       true},
      // Its kernel table, after the block, and the kernels compiled on demand.
      {"ggml_metal_init: error: load pipeline error: Error Domain=MTLLibraryErrorDomain Code=3",
       "pipeline",
       false},
      {"ggml_metal_compile_kernel: error: Error Domain=MTLLibraryErrorDomain Code=5",
       "pipeline",
       false},
      {"ggml_metal_get_buffer: error: tensor 'blk.0.attn_q.weight' buffer is nil", "buffer", false},
      {"ggml_backend_metal_buffer_type_alloc_buffer: error: failed to allocate buffer, size =  "
       "4096.00 MiB",
       "buffer",
       false},
      {"ggml_metal_encode_node: node  12, op =  MUL_MAT not implemented", "unsupported-op", false},
      {"/tmp/llama.cpp/ggml/src/ggml-metal/ggml-metal.m:2720: fatal error", "abort", false},
  };
  for (const auto& c : cases) {
    const std::string text =
        c.before_block ? fast.substr(0, block_start) + c.line + "\n" + fast.substr(block_start)
                       : fast + c.line + "\n";
    const std::size_t line =
        c.before_block ? line_count(fast.substr(0, block_start)) + 1 : line_count(fast) + 1;
    const auto report = classify_llama_log(text);
    EXPECT_EQ(report.verdict, LlamaLogVerdict::broken) << c.line;
    ASSERT_EQ(report.failures.size(), 1u) << c.line;
    EXPECT_EQ(report.failures[0].line, line) << c.line;
    EXPECT_EQ(to_json(report)["failures"][0]["kind"], c.kind) << c.line;
    EXPECT_EQ(report.run.earlier_runs, 0u) << c.line;
  }
  // A process that restarted and could not load its library: a run of its own, the last.
  const auto restarted = classify_llama_log(
      fast + "ggml_metal_init: allocating\nggml_metal_init: error: metal library is nil\n");
  EXPECT_EQ(restarted.verdict, LlamaLogVerdict::broken);
  EXPECT_EQ(restarted.run.earlier_runs, 1u);
  // Metal's own words about the failed command buffer are kept, as today's builds' are.
  const auto with_detail = classify_llama_log(
      fast + "ggml_backend_metal_synchronize: error: command buffer 0 failed with "
             "status 5\nerror: Internal Error (0000000e:Internal Error)\n");
  ASSERT_EQ(with_detail.failures.size(), 1u);
  EXPECT_EQ(with_detail.failures[0].detail, "error: Internal Error (0000000e:Internal Error)");
  // That build's other lines from those functions are no failure.
  for (const char* line : {
           "ggml_metal_load_library: error: could not use bundle path to find ggml-metal.metal, "
           "falling back to trying cwd",
           "ggml_backend_metal_log_allocated_size: allocated buffer, size =   100.00 MiB, (  "
           "200.00 "
           "/ 10922.67)",
       }) {
    const auto report = classify_llama_log(fast + line + "\n");
    EXPECT_EQ(report.verdict, LlamaLogVerdict::fast) << line;
    EXPECT_EQ(report.failure_count, 0u) << line;
  }
}

TEST(LlamaLogFailure, ToolsThatLogThroughCommonKeepTheirTimestampAndLevelOffTheWords) {
  // llama.cpp common/log.cpp: "%d.%02d.%03d.%03d " then "E " before each message, on by default
  // since PR #23021 in every tool that calls common_init() (llama-server among them).
  const std::string fast = fixture("unlocked-lume-unlock-shim.stderr");
  const auto report = classify_llama_log(
      fast + "0.01.234.567 E ggml_metal_synchronize: error: command buffer 0 failed with status 5\n"
             "0.01.234.568 E error: Internal Error (0000000e:Internal Error)\n");
  EXPECT_EQ(report.verdict, LlamaLogVerdict::broken);
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].text,
            "ggml_metal_synchronize: error: command buffer 0 failed with status 5");
  EXPECT_EQ(report.failures[0].detail, "error: Internal Error (0000000e:Internal Error)");
  // Digits that are not that prefix are left alone.
  const auto other = classify_llama_log(fast + "12.3 E error: something else\n");
  EXPECT_EQ(other.verdict, LlamaLogVerdict::fast);
}

TEST(LlamaLogFailure, LinesThatOnlyLookLikeFailuresAreNot) {
  const std::string fast = fixture("unlocked-lume-unlock-shim.stderr");
  for (const char* line : {
           // the residency-set collection being made, and rset_init's own NSError line
           "ggml_metal_rsets_init: creating a residency set collection (keep_alive = 180 s)",
           "ggml_metal_buffer_rset_init: error: Error Domain=MTLResidencySetErrorDomain Code=1",
           // another backend's command buffer, and prose without ggml's prefix
           "ggml_vulkan: error: command buffer 0 failed with status 5",
           "error: failed to initialize residency set",
           // the tensor API's probe: its failure only turns that API off (a WARN follows)
           "ggml_metal_library_compile_pipeline: failed to compile pipeline: base = "
           "'dummy_kernel', name = 'dummy_kernel'",
           // a WARN that falls back to the current folder and goes on
           "ggml_metal_library_init: error: could not use bundle path to find ggml-metal.metal, "
           "falling back to trying cwd",
           // another file's abort, and a path without a line number
           "/src/ggml/src/ggml-cpu/ggml-cpu.c:1234: fatal error",
           "loading /opt/llama/ggml-metal.metallib: done",
       }) {
    const auto report = classify_llama_log(fast + line + "\n");
    EXPECT_EQ(report.verdict, LlamaLogVerdict::fast) << line;
    EXPECT_EQ(report.failure_count, 0u) << line;
  }
}

TEST(LlamaLogFailure, ResidencySetFailureNamesTheEnvFix) {
  const auto report = classify_llama_log(fixture("broken-residency-set.stderr"));
  EXPECT_EQ(report.verdict, LlamaLogVerdict::broken);
  ASSERT_EQ(report.failures.size(), 1u);
  EXPECT_EQ(report.failures[0].line, 19u);
  const std::string fix =
      "env: {GGML_METAL_NO_RESIDENCY: \"1\"} on the enablement entry that runs llama-server";
  EXPECT_EQ(to_json(report)["failures"][0]["fix"], fix);
  EXPECT_TRUE(reasons_mention(report, "set " + fix)) << to_json(report).dump(2);
  // The gate's sentence carries the fix too, so `bench` and `create --bench` say it.
  const auto problem = unlocked_log_problem(report);
  ASSERT_TRUE(problem.has_value());
  EXPECT_THAT(*problem, HasSubstr("GGML_METAL_NO_RESIDENCY"));
  // Other failures have no fix to offer.
  const auto library = to_json(classify_llama_log(fixture("broken-library.stderr")));
  EXPECT_FALSE(library["failures"][0].contains("fix"));
}

TEST(LlamaLogFailure, CommandBufferFailureKeepsMetalsOwnWords) {
  const auto report = classify_llama_log(fixture("broken-command-buffer.stderr"));
  EXPECT_EQ(report.verdict, LlamaLogVerdict::broken);
  ASSERT_EQ(report.failures.size(), 2u);
  EXPECT_EQ(report.failures[0].line, 21u);
  EXPECT_EQ(report.failures[0].detail,
            "error: Execution of the command buffer was aborted due to an error during execution. "
            "Internal Error (0000000e:Internal Error)");
  EXPECT_EQ(report.failures[1].kind, MetalFailureKind::error_state);
  EXPECT_EQ(report.failures[1].line, 23u);
  EXPECT_EQ(report.failure_count, 2u);
}

TEST(LlamaLogFailure, RepeatedFailuresAreCountedAndCapped) {
  std::string text = fixture("unlocked-lume-unlock-shim.stderr");
  for (int i = 0; i < 100; ++i) {
    text += "ggml_metal_graph_compute: backend is in error state from a previous command buffer "
            "failure - recreate the backend to recover\n";
  }
  const auto report = classify_llama_log(text);
  EXPECT_EQ(report.failure_count, 100u);
  EXPECT_EQ(report.failures.size(), k_max_failures_kept);
  EXPECT_TRUE(reasons_mention(report, "and 92 more failure lines"));
}

TEST(LlamaLogFailure, LibraryFailureBeforeTheBlockIsThatRunsOwn) {
  const auto report = classify_llama_log(fixture("broken-library.stderr"));
  EXPECT_EQ(report.verdict, LlamaLogVerdict::broken);
  EXPECT_EQ(report.run.earlier_runs, 0u);
  ASSERT_EQ(report.failures.size(), 2u); // library_init's error, then device_init's
  EXPECT_EQ(report.failures[0].line, 3u);
  EXPECT_EQ(report.failures[1].line, 7u);
  EXPECT_EQ(report.run.process, "llama-bench");
}

TEST(LlamaLogFailure, ShimFailureLinesAreShimInactiveWithTheReason) {
  const auto ours = classify_llama_log(fixture("shim-not-enabled.stderr"));
  EXPECT_EQ(ours.verdict, LlamaLogVerdict::shim_inactive);
  ASSERT_TRUE(ours.shim_failure.has_value());
  EXPECT_EQ(ours.shim_failure->process, "llama-bench");
  EXPECT_EQ(ours.shim_failure->reason,
            "device_hooks_incomplete (the device's class lacks a capability method the shim "
            "replaces; the device stays stock)");
  EXPECT_EQ(ours.run.process, "llama-bench");
  EXPECT_TRUE(reasons_mention(ours, "line 1 '[lume-unlock-shim] not enabled for llama-bench"));
  EXPECT_EQ(to_json(ours)["shim_failure"]["line"], 1);

  const auto cua = classify_llama_log(fixture("shim-cua-hooks-incomplete.stderr"));
  EXPECT_EQ(cua.verdict, LlamaLogVerdict::shim_inactive);
  ASSERT_TRUE(cua.shim_failure.has_value());
  EXPECT_EQ(cua.shim_failure->kind, ShimKind::cua);
  EXPECT_EQ(cua.shim_failure->process, "llama-bench"); // from NSLog's "NAME[PID:TID]" prefix
  EXPECT_EQ(cua.shim_failure->reason, "Capability hook installation was incomplete");

  const auto methods = classify_llama_log(
      "[LumeMetalCapabilities] Required device methods are unavailable; leaving stock "
      "capabilities unchanged\n");
  EXPECT_EQ(methods.verdict, LlamaLogVerdict::shim_inactive); // even with no Metal lines
  EXPECT_TRUE(methods.shim_failure->process.empty());
  EXPECT_TRUE(to_json(methods)["shim_failure"]["process"].is_null());
}

TEST(LlamaLogFailure, TheLastRunWins) {
  const auto report = classify_llama_log(fixture("two-runs-restarted.stderr"));
  // The first run failed on its residency set; the restart ran without residency sets.
  EXPECT_EQ(report.verdict, LlamaLogVerdict::fast) << to_json(report).dump(2);
  EXPECT_EQ(report.failure_count, 0u);
  EXPECT_EQ(report.residency_sets, false);
  EXPECT_EQ(report.run.first_line, 21u);
  EXPECT_EQ(report.run.process, "llama-server");
  EXPECT_EQ(report.run.earlier_runs, 1u);
  EXPECT_EQ(report.shim->line, 21u);
  const auto document = to_json(report);
  EXPECT_EQ(document["run"],
            (nlohmann::json{{"line", 21}, {"process", "llama-server"}, {"earlier_runs", 1}}));
  EXPECT_TRUE(reasons_mention(report,
                              "read the last run in the file, from line 21 (llama-server); "
                              "1 earlier run"));

  // The other way round: a fast run, then a restart that broke. Nothing of the first is mixed in.
  const std::string fast = fixture("unlocked-lume-unlock-shim.stderr");
  const auto broke = classify_llama_log(fast + fixture("broken-residency-set.stderr"));
  EXPECT_EQ(broke.verdict, LlamaLogVerdict::broken);
  EXPECT_EQ(broke.run.first_line, line_count(fast) + 1);
  EXPECT_EQ(broke.failures[0].line, line_count(fast) + 19);
}

TEST(LlamaLogFailure, RestartsWithoutShimLinesSplitAtTheRepeatedBlock) {
  const std::string stock = fixture("stock-guest.stderr");
  const std::string fast = fixture("era-2026-bare-mtl0.stderr"); // has a shim line
  const auto report = classify_llama_log(fast + stock);
  EXPECT_EQ(report.verdict, LlamaLogVerdict::stock);
  EXPECT_FALSE(report.shim.has_value()); // the first run's shim line is not the last run's
  EXPECT_EQ(report.run.earlier_runs, 1u);
  EXPECT_FALSE(report.run.process.has_value());
  // Two stock runs with no shim lines: the second GPU name line starts the second run.
  const auto twice = classify_llama_log(stock + stock);
  EXPECT_EQ(twice.run.earlier_runs, 1u);
  EXPECT_EQ(twice.run.first_line, line_count(stock) + 5);
  // A block printed again may be the same process (before ggml's Metal refactor, one block per
  // context): a failure between the two blocks still counts.
  const std::string old_build = fixture("era-2025-has-residency.stderr");
  const auto contexts = classify_llama_log(
      old_build + "ggml_metal_graph_compute: command buffer 0 failed with status 5\n" + old_build);
  EXPECT_EQ(contexts.verdict, LlamaLogVerdict::broken);
  EXPECT_EQ(contexts.run.earlier_runs, 1u);
  ASSERT_EQ(contexts.failures.size(), 1u);
  EXPECT_EQ(contexts.failures[0].line, line_count(old_build) + 1);
  // A library failure after a block belongs to the restart that follows.
  const auto restarted = classify_llama_log(
      stock + "ggml_metal_library_init: error: Error Domain=MTLLibraryErrorDomain Code=3\n");
  EXPECT_EQ(restarted.run.earlier_runs, 1u);
  EXPECT_EQ(restarted.verdict, LlamaLogVerdict::broken);
  EXPECT_FALSE(restarted.apple_family.has_value());
}

TEST(LlamaLogFailure, SuccessLineWithoutTheBlockIsShimEnabled) {
  const auto report =
      classify_llama_log(fixture("server-shim-enabled.stderr"), LlamaLogOptions{true});
  EXPECT_EQ(report.verdict, LlamaLogVerdict::shim_enabled);
  EXPECT_TRUE(
      reasons_mention(report, "line 1: the shim reports its hooks in place in llama-server"));
  EXPECT_TRUE(reasons_mention(report, "llama.cpp's verbosity hid ggml's capability block"));
  EXPECT_FALSE(unlocked_log_problem(report).has_value());
  // Without the shim line it stays no-metal-log; the broad research build stays unsafe.
  EXPECT_EQ(classify_llama_log("main: server is listening\n").verdict,
            LlamaLogVerdict::no_metal_log);
  EXPECT_EQ(classify_llama_log(fixture("mlx-broad-profile.stderr")).verdict,
            LlamaLogVerdict::unsafe_profile);
}

} // namespace
} // namespace lume_unlock::verify
