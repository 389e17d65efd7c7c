#include "verify/bench.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::verify {
namespace {

LlamaBenchTest run(double avg_ts, std::vector<double> samples) {
  LlamaBenchTest t;
  t.n_prompt = 512;
  t.avg_ts = avg_ts;
  t.samples_ts = std::move(samples);
  return t;
}

TEST(BenchStatistics, MedianIsTheMiddleSampleOfAnOddCountInAnyOrder) {
  EXPECT_EQ(median({3.0}), 3.0);
  EXPECT_EQ(median({9.0, 1.0, 5.0}), 5.0);
  EXPECT_EQ(median({12.0, 8.5, 12.5, 12.25, 12.75}), 12.25);
}

TEST(BenchStatistics, MedianOfAnEvenCountIsTheMeanOfTheTwoMiddleSamples) {
  EXPECT_EQ(median({4.0, 1.0}), 2.5);
  EXPECT_EQ(median({10.0, 1.0, 3.0, 7.0}), 5.0);
  // Duplicates in the middle: the mean of the two equal middles.
  EXPECT_EQ(median({2.0, 2.0, 1.0, 9.0}), 2.0);
  EXPECT_FALSE(median({}).has_value());
}

TEST(BenchStatistics, OneSlowRepetitionMovesTheMeanNotTheMedian) {
  // Nine repetitions at 12 t/s and one at 3: llama-bench's mean falls to 11.1, the median
  // stays 12; the unlocked run is steady at 120. The two statistics give 10.81x and 10.00x.
  std::vector<double> stock(9, 12.0);
  stock.push_back(3.0);
  const auto figures =
      median_figures(run(11.1, stock), run(120, std::vector<double>(10, 120.0)), nullptr);
  ASSERT_TRUE(figures.has_value());
  EXPECT_EQ(figures->stock_ts, 12.0);
  EXPECT_EQ(figures->unlocked_ts, 120.0);
  EXPECT_DOUBLE_EQ(figures->speedup, 10.0);
  EXPECT_NE(figures->speedup, 120 / 11.1);
  EXPECT_EQ(figures->stock_samples, 10u);
  EXPECT_FALSE(figures->host_ratio.has_value());
}

TEST(BenchStatistics, RunsOfDifferentRepetitionsGiveEachRunsOwnMedianAndTheirCounts) {
  const auto figures = median_figures(
      run(10, {9, 10, 11, 10, 10, 30, 10, 10, 10, 10}), run(50, {40, 50, 60}), nullptr);
  ASSERT_TRUE(figures.has_value());
  EXPECT_EQ(figures->stock_ts, 10.0);
  EXPECT_EQ(figures->unlocked_ts, 50.0);
  EXPECT_DOUBLE_EQ(figures->speedup, 5.0);
  EXPECT_EQ(figures->stock_samples, 10u);
  EXPECT_EQ(figures->unlocked_samples, 3u);
  EXPECT_EQ(to_json(*figures)["samples"], (nlohmann::json{{"stock", 10}, {"unlocked", 3}}));
}

TEST(BenchStatistics, WithoutSamplesOnEitherGuestRunThereAreNoMedianFigures) {
  EXPECT_FALSE(median_figures(run(10, {}), run(50, {50}), nullptr).has_value());
  EXPECT_FALSE(median_figures(run(10, {10}), run(50, {}), nullptr).has_value());
  // A stock median of 0 gives no speedup.
  EXPECT_FALSE(median_figures(run(1, {0, 0, 3}), run(50, {50}), nullptr).has_value());
}

TEST(BenchStatistics, TheHostPartNeedsTheHostsSamples) {
  const LlamaBenchTest host = run(100, {98, 100, 104, 102});
  const auto figures = median_figures(run(10, {10}), run(90, {90}), &host);
  ASSERT_TRUE(figures.has_value());
  EXPECT_EQ(figures->host_ts, 101.0);
  EXPECT_DOUBLE_EQ(*figures->host_ratio, 90.0 / 101.0);
  EXPECT_EQ(figures->host_samples, 4u);
  EXPECT_EQ(to_json(*figures),
            nlohmann::json({{"stock_ts", 10.0},
                            {"unlocked_ts", 90.0},
                            {"speedup", 9.0},
                            {"host_ts", 101.0},
                            {"host_ratio", 90.0 / 101.0},
                            {"samples", {{"stock", 1}, {"unlocked", 1}, {"host", 4}}}}));
  const LlamaBenchTest bare = run(100, {});
  const auto without = median_figures(run(10, {10}), run(90, {90}), &bare);
  ASSERT_TRUE(without.has_value());
  EXPECT_FALSE(without->host_ts.has_value());
  EXPECT_FALSE(to_json(*without).contains("host_ratio"));
  EXPECT_FALSE(to_json(*without)["samples"].contains("host"));
}

} // namespace
} // namespace lume_unlock::verify
