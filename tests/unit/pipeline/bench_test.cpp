#include "pipeline/bench.hpp"
#include "util/sha256.hpp"

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
                            {"failures", nlohmann::json::array()},
                            {"raw", bench_raw_record(bench_raw_files(measured, std::nullopt))}}));
  // Each output's sha256 and size, of the bytes as printed.
  measured.stock.stdout_text = "[]";
  EXPECT_EQ(bench_raw_record(bench_raw_files(measured, std::string("host")))["stock.json"],
            nlohmann::json({{"sha256", util::sha256_hex("[]")}, {"size", 2}}));
  EXPECT_EQ(bench_raw_record(bench_raw_files(measured, std::string("host"))).size(), 5u);
  EXPECT_EQ(bench_raw_record(bench_raw_files(measured, std::nullopt)).size(), 4u);
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
  const auto measured = nlohmann::json::parse(
      R"({"tests":[{"test":"pp512","speedup":10}],"passed":true,)"
      R"("perplexity":{"context":512,"stock":{"estimate":11.826},"unlocked":{"estimate":11.827}}})");
  EXPECT_EQ(bench_summary(measured),
            "pp512 10.00x, perplexity 11.827 vs 11.826 on CPU (gate passed)");
  EXPECT_EQ(bench_annotations(measured).at("dev.lume-unlock.bench.perplexity.unlocked"), "11.8270");
}

TEST(BenchAnnotations, ASummaryOfTheFiguresAsStrings) {
  const auto record = nlohmann::json::parse(R"({
    "measured_at": "2026-12-03T10:00:00Z", "model_type": "gemma3 12B Q4_0",
    "build_commit": "ee3d1b54c", "gpu": "Apple Paravirtual device", "host_chip": "Apple M1 Ultra",
    "tests": [
      {"test": "pp512", "speedup": 7.2013, "stock_ts": 71.9, "unlocked_ts": 517.73,
       "host_ratio": 0.99594},
      {"test": "tg128", "speedup": 14.48, "stock_ts": 3.615, "unlocked_ts": 52.35},
      {"test": "pp512 @ d4096", "speedup": 6.5, "stock_ts": 10, "unlocked_ts": 65}],
    "log": {"stock": "stock", "unlocked": "fast"}, "passed": true})");
  const std::string p = "dev.lume-unlock.bench.";
  EXPECT_EQ(bench_annotations(record),
            (oci::Annotations{{p + "pp512.speedup", "7.20"},
                              {p + "pp512.stock_ts", "71.90"},
                              {p + "pp512.unlocked_ts", "517.73"},
                              {p + "pp512.host_ratio", "0.996"},
                              {p + "tg128.speedup", "14.48"},
                              {p + "tg128.stock_ts", "3.62"},
                              {p + "tg128.unlocked_ts", "52.35"},
                              {p + "pp512-d4096.speedup", "6.50"},
                              {p + "pp512-d4096.stock_ts", "10.00"},
                              {p + "pp512-d4096.unlocked_ts", "65.00"},
                              {p + "model_type", "gemma3 12B Q4_0"},
                              {p + "build_commit", "ee3d1b54c"},
                              {p + "gpu", "Apple Paravirtual device"},
                              {p + "host_chip", "Apple M1 Ultra"},
                              {p + "measured_at", "2026-12-03T10:00:00Z"},
                              {p + "log", "fast"},
                              {p + "passed", "true"},
                              {p + "summary",
                               "pp512 7.20x 99.6% of host, tg128 14.48x, pp512 @ d4096 6.50x "
                               "(log fast, gate passed, 2026-12-03T10:00:00Z)"}}));
  // Only what the record has: nothing invented.
  EXPECT_EQ(bench_annotations(nlohmann::json::parse(R"({"passed": false})")),
            (oci::Annotations{{p + "passed", "false"}}));
  EXPECT_TRUE(bench_annotations(nlohmann::json::array()).empty());
}

TEST(BenchFromRecipe, TheRecipesSettingsAndAPlanLine) {
  recipe::BenchSpec spec;
  spec.entry = "bench-gpu";
  spec.request.model = "/Users/lume/m.gguf";
  spec.request.repetitions = 5;
  spec.thresholds.min_speedup = 5;
  spec.thresholds.min_host_ratio = {{"pp", 0.95}, {"tg", 0.7}};
  BenchOptions options = bench_options_from_recipe(spec);
  EXPECT_EQ(options.entry, "bench-gpu");
  EXPECT_EQ(options.request.model, "/Users/lume/m.gguf");
  EXPECT_EQ(options.request.repetitions, 5);
  EXPECT_EQ(verify::to_json(options.thresholds), verify::to_json(spec.thresholds));
  EXPECT_FALSE(options.host);
  EXPECT_EQ(describe_bench(options),
            "entry 'bench-gpu', model '/Users/lume/m.gguf', -p 512 -n 128 -r 5, gate "
            "min_speedup 5, min_host_ratio pp=0.95,tg=0.7; perplexity with entry "
            "'llama-perplexity' within 2% of the CPU's");
  options.thresholds = {};
  options.host_source = "recipe bench.host_json host.json";
  options.max_perplexity_drift = 0.005;
  EXPECT_EQ(describe_bench(options),
            "entry 'bench-gpu', model '/Users/lume/m.gguf', -p 512 -n 128 -r 5, no speed gate "
            "but the Metal log; perplexity with entry 'llama-perplexity' within 0.5% of the "
            "CPU's, host figures from recipe bench.host_json host.json");
}

} // namespace
} // namespace lume_unlock::pipeline
