#include "verify/bench_gate.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock::verify {
namespace {

using ::testing::HasSubstr;

BenchRow row(const std::string& test,
             const std::string& kind,
             double speedup,
             std::optional<double> host_ratio = {}) {
  BenchRow r;
  r.test = test;
  r.kind = kind;
  r.stock_ts = 10;
  r.unlocked_ts = 10 * speedup;
  r.speedup = speedup;
  if (host_ratio) {
    r.host_ts = r.unlocked_ts / *host_ratio;
    r.host_ratio = host_ratio;
  }
  return r;
}

LlamaLogReport log_of(LlamaLogVerdict verdict) {
  LlamaLogReport report;
  report.verdict = verdict;
  return report;
}

TEST(BenchGate, ParsesSpeedupsAndHostRatios) {
  EXPECT_EQ(parse_min_speedup("5", "--min-speedup").value(), 5.0);
  EXPECT_EQ(parse_min_speedup("7.5x", "--min-speedup").value(), 7.5);
  for (const char* bad : {"", "x", "0.5", "-5", "5e1", "five", "1..2", ".5", "nan", "inf"}) {
    auto parsed = parse_min_speedup(bad, "--min-speedup");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().category(), ErrorCategory::usage);
    EXPECT_THAT(parsed.error().message(), HasSubstr("is not a speedup of at least 1"));
  }
  auto ratios = parse_min_host_ratio("pp=0.95,tg=70%", "--min-host-ratio");
  ASSERT_TRUE(ratios.ok()) << ratios.error().message();
  EXPECT_EQ(ratios.value(), (std::map<std::string, double>{{"pp", 0.95}, {"tg", 0.70}}));
  EXPECT_EQ(format_host_ratio(ratios.value()), "pp=0.95,tg=0.7");
  EXPECT_EQ(parse_min_host_ratio("pg=1", "x").value().at("pg"), 1.0);

  const std::pair<const char*, const char*> bad[] = {
      {"0.9", "'0.9' is not one of pp=R, tg=R or pg=R"},
      {"pp=0.9,", "'' is not one of pp=R, tg=R or pg=R"},
      {"xx=0.9", "'xx=0.9' is not one of"},
      {"pp=", "'pp=' has no ratio in [0.01, 2]"},
      {"pp=0", "has no ratio in [0.01, 2]"},
      {"pp=3", "has no ratio in [0.01, 2]"},
      {"pp=-1", "has no ratio"},
      {"pp=0.9,pp=0.8", "pp is given twice"},
  };
  for (const auto& [text, why] : bad) {
    auto parsed = parse_min_host_ratio(text, "--min-host-ratio");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().category(), ErrorCategory::usage);
    EXPECT_THAT(parsed.error().message(), HasSubstr(why)) << parsed.error().message();
  }
}

TEST(BenchGate, ParsesOneHostRatioAsTheListDoes) {
  EXPECT_EQ(parse_host_ratio("0.95", "bench.min_host_ratio.pp").value(), 0.95);
  EXPECT_EQ(parse_host_ratio("70%", "bench.min_host_ratio.tg").value(), 0.70);
  EXPECT_EQ(parse_host_ratio("2", "x").value(), 2.0);
  for (const char* bad : {"", "0", "3", "-0.5", "0.001", "1e-1", "pp=0.9", "%"}) {
    auto parsed = parse_host_ratio(bad, "bench.min_host_ratio.pp");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().category(), ErrorCategory::usage);
    EXPECT_EQ(parsed.error().message(),
              "bench.min_host_ratio.pp: '" + std::string(bad) +
                  "' is not a share of host in [0.01, 2]");
  }
}

TEST(BenchGate, NamesEveryFigureThatFallsShort) {
  BenchThresholds thresholds;
  thresholds.min_speedup = 5;
  thresholds.min_host_ratio = {{"pp", 0.95}, {"tg", 0.70}};
  const auto fast = log_of(LlamaLogVerdict::fast);

  EXPECT_TRUE(gate_bench({row("pp512", "pp", 7.2, 0.996), row("tg128", "tg", 14.5, 0.949)},
                         thresholds,
                         fast)
                  .empty());
  EXPECT_EQ(gate_bench({row("pp512", "pp", 4.98, 0.96), row("tg128", "tg", 14.5, 0.6949)},
                       thresholds,
                       fast),
            (std::vector<std::string>{"pp512: speedup 4.98x is below --min-speedup 5",
                                      "tg128: 69.5% of host is below --min-host-ratio tg=0.7"}));
  // Exactly at the threshold passes.
  EXPECT_TRUE(
      gate_bench({row("pp512", "pp", 5, 0.95), row("tg128", "tg", 5, 0.70)}, thresholds, fast)
          .empty());
  // No thresholds: only the log can fail the gate.
  EXPECT_TRUE(gate_bench({row("pp512", "pp", 1.0)}, {}, fast).empty());
}

TEST(BenchGate, AHostRatioWithoutHostFiguresFails) {
  BenchThresholds thresholds;
  thresholds.min_host_ratio = {{"tg", 0.7}};
  EXPECT_EQ(gate_bench({row("tg128", "tg", 10)}, thresholds, log_of(LlamaLogVerdict::fast)),
            (std::vector<std::string>{
                "--min-host-ratio tg=0.7: no tg test has a host figure to compare with (give "
                "--host-json FILE or --host-run)"}));
}

TEST(BenchGate, AnUnlockedRunWhoseLogIsNotUnlockedFailsAsWhatItIs) {
  const std::vector<BenchRow> rows = {row("pp512", "pp", 11.1)};
  auto inactive = gate_bench(rows, {}, log_of(LlamaLogVerdict::shim_inactive));
  ASSERT_EQ(inactive.size(), 1u);
  EXPECT_EQ(inactive[0],
            "the shim was inactive in the unlocked run: its Metal log is shim-inactive "
            "(llama.cpp saw the stock device)");
  EXPECT_THAT(gate_bench(rows, {}, log_of(LlamaLogVerdict::stock))[0], HasSubstr("ran at stock"));
  EXPECT_THAT(gate_bench(rows, {}, log_of(LlamaLogVerdict::unsafe_profile))[0],
              HasSubstr("unsafe-profile"));
  EXPECT_TRUE(gate_bench(rows, {}, log_of(LlamaLogVerdict::partial)).empty());
  EXPECT_TRUE(gate_bench(rows, {}, log_of(LlamaLogVerdict::no_metal_log)).empty());
}

TEST(BenchGate, ThresholdsAsJson) {
  BenchThresholds thresholds;
  EXPECT_EQ(to_json(thresholds), nlohmann::json::object());
  thresholds.min_speedup = 5;
  thresholds.min_host_ratio = {{"pp", 0.95}};
  EXPECT_EQ(to_json(thresholds),
            nlohmann::json({{"min_speedup", 5.0}, {"min_host_ratio", {{"pp", 0.95}}}}));
}

} // namespace
} // namespace lume_unlock::verify
