#include "pipeline/bench.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::pipeline {
namespace {

verify::LlamaBenchTest test_of(long long prompt, long long gen, double ts, const char* gpu) {
  verify::LlamaBenchTest t;
  t.n_prompt = prompt;
  t.n_gen = gen;
  t.avg_ts = ts;
  t.gpu_info = gpu;
  t.build_commit = "ee3d1b54c";
  t.model_type = "llama 1B Q4_K - Medium";
  t.backends = "MTL,BLAS";
  return t;
}

TEST(BenchRecord, HoldsEveryFigureTheBuildTheModelAndTheVerdicts) {
  BenchOptions options;
  options.vm = "vm1";
  options.request.model = "/Users/lume/m.gguf";
  options.thresholds.min_speedup = 5;
  options.host = std::vector{test_of(512, 0, 500, "Apple M1 Ultra")};
  options.host_source = "--host-json host.json";
  apply::GuestBench measured;
  measured.stock.tests = {test_of(512, 0, 50, "Apple Paravirtual device")};
  measured.unlocked.tests = {test_of(512, 0, 450, "Apple Paravirtual device")};
  measured.stock.log.verdict = verify::LlamaLogVerdict::stock;
  measured.unlocked.log.verdict = verify::LlamaLogVerdict::fast;
  auto rows = verify::compare_bench(measured.stock.tests, measured.unlocked.tests, options.host);
  ASSERT_TRUE(rows.ok());
  const auto record = bench_record(options, measured, rows.value(), {}, "2026-12-03T10:00:00Z");
  EXPECT_EQ(record,
            nlohmann::json({{"measured_at", "2026-12-03T10:00:00Z"},
                            {"entry", "llama-bench"},
                            {"model", "/Users/lume/m.gguf"},
                            {"arguments", {{"prompt", 512}, {"gen", 128}, {"repetitions", 3}}},
                            {"build_commit", "ee3d1b54c"},
                            {"model_type", "llama 1B Q4_K - Medium"},
                            {"backends", "MTL,BLAS"},
                            {"gpu", "Apple Paravirtual device"},
                            {"host_chip", "Apple M1 Ultra"},
                            {"host_source", "--host-json host.json"},
                            {"tests", {verify::to_json(rows.value()[0])}},
                            {"log", {{"stock", "stock"}, {"unlocked", "fast"}}},
                            {"thresholds", {{"min_speedup", 5.0}}},
                            {"passed", true},
                            {"failures", nlohmann::json::array()}}));
  EXPECT_EQ(bench_summary(record),
            "pp512 9.00x 90.0% of host (log fast, gate passed, 2026-12-03T10:00:00Z)");
}

TEST(BenchRecord, SummaryOfAFailedOrUnreadableRecord) {
  const auto failed = nlohmann::json::parse(
      R"({"tests":[{"test":"tg128","speedup":1.0}],"log":{"unlocked":"shim-inactive"},)"
      R"("passed":false})");
  EXPECT_EQ(bench_summary(failed), "tg128 1.00x (log shim-inactive, gate FAILED)");
  EXPECT_EQ(bench_summary(nlohmann::json::object()), "");
  EXPECT_EQ(bench_summary(nlohmann::json::parse(R"({"tests":[{"test":7,"speedup":1}]})")), "");
  EXPECT_EQ(bench_summary(nlohmann::json::parse(R"({"tests":"many"})")), "");
}

} // namespace
} // namespace lume_unlock::pipeline
