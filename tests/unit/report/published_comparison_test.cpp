#include "composed_report.hpp"
#include "report/published_comparison.hpp"
#include "report/report_markdown.hpp"
#include "report/speedup_chart.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// The composed bench (9.0x / 12.0x by avg_ts, 90 % / 75 % of host) with medians that differ
/// from the means, as one slow repetition makes them, and a published run.
nlohmann::json bench_with_published() {
  nlohmann::json bench = *composed_record(true).bench;
  bench["arguments"] = {{"prompt", 512}, {"gen", 128}, {"repetitions", 3}, {"threads", 8}};
  bench["tests"][0]["median"] = {{"stock_ts", 50.0},
                                 {"unlocked_ts", 450.0},
                                 {"speedup", 9.0},
                                 {"host_ts", 500.0},
                                 {"host_ratio", 0.9},
                                 {"samples", {{"stock", 3}, {"unlocked", 3}, {"host", 3}}}};
  bench["tests"][1]["median"] = {{"stock_ts", 2.5},
                                 {"unlocked_ts", 36.0},
                                 {"speedup", 14.4},
                                 {"samples", {{"stock", 3}, {"unlocked", 3}}}};
  bench["published"] = {{"source", "docs/sources.md, The published run"},
                        {"command", "llama-bench -p 512 -n 128 -r 3 -t 8 -o json"},
                        {"statistic", "median of samples_ts"},
                        {"speedup", {{"pp", 11.08}, {"tg", 14.54}}},
                        {"host_ratio", {{"pp", 0.9825}, {"tg", 0.7206}}}};
  return bench;
}

TEST(PublishedComparison, AFigureReproducesWithinATenthOfThePublishedOne) {
  EXPECT_EQ(published_verdict(11.08, 11.08), "reproduces");
  EXPECT_EQ(published_verdict(10.0, 11.08), "reproduces");                // 9.7 % below
  EXPECT_EQ(published_verdict(9.9, 11.08), "below the published figure"); // 10.6 % below
  EXPECT_EQ(published_verdict(12.1, 11.08), "reproduces");                // 9.2 % above
  EXPECT_EQ(published_verdict(12.3, 11.08), "above the published figure");
  EXPECT_EQ(k_reproduce_tolerance, 0.10);
}

TEST(PublishedComparison, EachFigureInThePublishersStatisticIsJudgedAndTheMeanIsShown) {
  const nlohmann::json comparison = compare_with_published(bench_with_published());
  EXPECT_EQ(comparison["source"], "docs/sources.md, The published run");
  EXPECT_EQ(comparison["statistic"], "median of samples_ts");
  EXPECT_EQ(comparison["tolerance"], 0.10);
  EXPECT_EQ(comparison["measured_command"], "llama-bench -p 512 -n 128 -r 3 -t 8 -o json");
  EXPECT_EQ(comparison["command_matches"], true);
  const auto row = [](const char* test,
                      const char* figure,
                      const char* statistic,
                      nlohmann::json measured,
                      nlohmann::json published,
                      const char* verdict) {
    return nlohmann::json{{"test", test},
                          {"figure", figure},
                          {"statistic", statistic},
                          {"measured", measured},
                          {"published", published},
                          {"verdict", verdict}};
  };
  const char* median = "median of samples_ts";
  const char* avg = "ratio of avg_ts";
  const char* not_judged = "not judged: the published figures are medians";
  EXPECT_EQ(comparison["rows"],
            nlohmann::json::array(
                {row("pp512", "speedup", median, 9.0, 11.08, "below the published figure"),
                 row("pp512", "speedup", avg, 9.0, nullptr, not_judged),
                 row("pp512", "host_ratio", median, 0.9, 0.9825, "reproduces"),
                 row("pp512", "host_ratio", avg, 0.9, nullptr, not_judged),
                 // tg128: the median speedup (14.4x) reproduces 14.54x; the mean (12.0x) would not.
                 row("tg128", "speedup", median, 14.4, 14.54, "reproduces"),
                 row("tg128", "speedup", avg, 12.0, nullptr, not_judged),
                 row("tg128",
                     "host_ratio",
                     median,
                     nullptr,
                     0.7206,
                     "not measured: no host run with samples_ts (bench.host_json or --host-json)"),
                 row("tg128", "host_ratio", avg, 0.75, nullptr, not_judged)}))
      << comparison["rows"].dump(2);
}

TEST(PublishedComparison, WithoutSamplesTheMedianRowsSaySoAndWithoutAPublishedRunThereIsNone) {
  nlohmann::json bench = bench_with_published();
  bench["tests"][0].erase("median");
  bench["tests"][0].erase("host_ratio");
  const nlohmann::json rows = compare_with_published(bench)["rows"];
  EXPECT_EQ(rows[0]["measured"], nullptr);
  EXPECT_EQ(rows[0]["verdict"], "not measured: the llama-bench output has no samples_ts");
  EXPECT_EQ(rows[1]["measured"], 9.0);
  EXPECT_EQ(rows[3]["verdict"], "not measured: no host run (bench.host_json or --host-json)");
  // A published run with speedups only gives speedup rows.
  bench["published"].erase("host_ratio");
  EXPECT_EQ(compare_with_published(bench)["rows"].size(), 4u);

  EXPECT_TRUE(compare_with_published(*composed_record(true).bench).is_null());
  EXPECT_TRUE(published_comparison_notes(*composed_record(true).bench).empty());
}

TEST(PublishedComparison, AnotherCommandOrOtherSampleCountsAreNoted) {
  nlohmann::json bench = bench_with_published();
  EXPECT_TRUE(published_comparison_notes(bench).empty());
  bench["arguments"]["repetitions"] = 10;
  bench["tests"][1]["median"]["samples"] = {{"stock", 10}, {"unlocked", 4}};
  const nlohmann::json notes = published_comparison_notes(bench);
  EXPECT_EQ(compare_with_published(bench)["command_matches"], false);
  EXPECT_EQ(notes,
            nlohmann::json::array(
                {"the bench ran 'llama-bench -p 512 -n 128 -r 10 -t 8 -o json', not the published "
                 "run's 'llama-bench -p 512 -n 128 -r 3 -t 8 -o json': its figures are set beside "
                 "the published ones, but were not measured the same way",
                 "pp512: the medians are of 3 host, 3 stock, 3 unlocked samples, while the bench "
                 "asked for -r 10 (each run's median is still its own)",
                 "tg128: the medians are of 10 stock, 4 unlocked samples, while the bench asked "
                 "for -r 10 (each run's median is still its own)"}));
}

/// The composed report with the published run in its bench.
nlohmann::json published_report() {
  ReportInputs inputs;
  inputs.record = composed_record(true);
  inputs.record.bench = bench_with_published();
  inputs.generated_at = "2026-12-04T12:00:00Z";
  inputs.tool_version = "0.0.0-test";
  return build_report(inputs);
}

TEST(PublishedComparison, TheReportCarriesTheComparisonAndItsNotes) {
  const nlohmann::json report = published_report();
  EXPECT_EQ(report["bench"]["published_comparison"],
            compare_with_published(bench_with_published()));
  EXPECT_EQ(report["bench"]["published"], bench_with_published()["published"]);
  EXPECT_FALSE(composed_report(true)["bench"].contains("published_comparison"));
}

TEST(PublishedComparison, ReportMdSetsMeasuredBesidePublishedWithVerdicts) {
  const std::string md = render_report_markdown(published_report());
  const auto at = [&](const std::string& part) { return md.find(part); };
  ASSERT_NE(at("## Against the published run\n"), std::string::npos) << md;
  EXPECT_LT(at("## How fast"), at("## Against the published run"));
  EXPECT_LT(at("## Against the published run"), at("## On what"));
  EXPECT_NE(at("The published figures (docs/sources.md, The published run) were measured with "
               "`llama-bench -p 512 -n 128 -r 3 -t 8 -o json`; they are **median of samples_ts** "
               "(the median of each run's repetitions, then their ratio). This bench ran "
               "`llama-bench -p 512 -n 128 -r 3 -t 8 -o json`, the same command. A figure "
               "reproduces the published one within 10 % of it;"),
            std::string::npos)
      << md;
  for (const char* line :
       {"| test | figure | statistic | measured | published | verdict |\n",
        "| pp512 | speedup | median of samples_ts | 9.00x | 11.08x | **below the published "
        "figure** |\n",
        "| pp512 | speedup | ratio of avg_ts | 9.00x | — | not judged: the published figures are "
        "medians |\n",
        "| pp512 | unlocked / host | median of samples_ts | 90.00% | 98.25% | **reproduces** |\n",
        "| tg128 | speedup | median of samples_ts | 14.40x | 14.54x | **reproduces** |\n",
        "| tg128 | unlocked / host | median of samples_ts | — | 72.06% | **not measured: no host "
        "run with samples_ts (bench.host_json or --host-json)** |\n"}) {
    EXPECT_NE(at(line), std::string::npos) << line << "\n" << md;
  }
  EXPECT_NE(at("llama-bench (`-p 512 -n 128 -r 3 -t 8`)"), std::string::npos) << md;
  EXPECT_THAT(render_report_markdown(composed_report(true)),
              Not(HasSubstr("## Against the published run")));
}

TEST(SpeedupChart, EachPanelSetsThePublishedFiguresBesideTheMeasuredOnes) {
  const std::string svg = render_speedup_chart(published_report());
  for (const char* line : {">speedup 9.00x, published 11.08x: below the published figure</text>",
                           ">of host 90.00%, published 98.25%: reproduces</text>",
                           ">speedup 14.40x, published 14.54x: reproduces</text>",
                           ">of host not measured, published 72.06%</text>"}) {
    EXPECT_THAT(svg, HasSubstr(line)) << line << "\n" << svg;
  }
  // In the verdict's colour: red below, green when it reproduces.
  EXPECT_THAT(svg, HasSubstr("fill=\"#c5221f\">speedup 9.00x"));
  EXPECT_THAT(svg, HasSubstr("fill=\"#188038\">speedup 14.40x"));
  EXPECT_THAT(render_speedup_chart(composed_report(true)), Not(HasSubstr("published")));
}

} // namespace
} // namespace lume_unlock::report
