#include "support/evidence.hpp"
#include "util/atomic_file.hpp"
#include "verify/bench_compare.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::verify {
namespace {

std::vector<LlamaBenchTest> load(const std::string& path) {
  auto text = util::read_file(path);
  EXPECT_TRUE(text.ok()) << path;
  auto parsed = parse_llama_bench_json(text.ok() ? text.value() : "", path);
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message());
  return parsed.ok() ? parsed.value() : std::vector<LlamaBenchTest>{};
}

std::vector<LlamaBenchTest> fixture(const std::string& name) {
  return load(std::string(LUME_UNLOCK_FIXTURES_DIR) + "/llama-bench/" + name);
}

LlamaBenchTest test_of(long long prompt, long long gen, double ts) {
  LlamaBenchTest t;
  t.n_prompt = prompt;
  t.n_gen = gen;
  t.avg_ts = ts;
  return t;
}

TEST(BenchCompare, RowsGiveSpeedupAndShareOfHost) {
  auto rows = compare_bench(
      fixture("guest-stock.json"), fixture("guest-unlocked.json"), fixture("host.json"));
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  ASSERT_EQ(rows.value().size(), 2u);
  const BenchRow& pp = rows.value()[0];
  EXPECT_EQ(pp.test, "pp512");
  EXPECT_EQ(pp.kind, "pp");
  EXPECT_EQ(pp.stock_ts, 80.125);
  EXPECT_EQ(pp.unlocked_ts, 801.25);
  EXPECT_DOUBLE_EQ(pp.speedup, 10.0);
  EXPECT_EQ(pp.host_ts, 820.0);
  EXPECT_DOUBLE_EQ(*pp.host_ratio, 801.25 / 820.0);
  const BenchRow& tg = rows.value()[1];
  EXPECT_DOUBLE_EQ(tg.speedup, 12.0);
  EXPECT_DOUBLE_EQ(*tg.host_ratio, 0.75);

  EXPECT_EQ(render_bench_table(rows.value()),
            "test      stock t/s   unlocked t/s  speedup  host t/s  of host\n"
            "pp512  80.12 ± 1.50  801.25 ± 3.75   10.00x    820.00    97.7%\n"
            "tg128   4.50 ± 0.25   54.00 ± 0.50   12.00x     72.00    75.0%\n");
  EXPECT_EQ(to_json(tg),
            nlohmann::json({{"test", "tg128"},
                            {"kind", "tg"},
                            {"stock_ts", 4.5},
                            {"stock_stddev_ts", 0.25},
                            {"unlocked_ts", 54.0},
                            {"unlocked_stddev_ts", 0.5},
                            {"speedup", 12.0},
                            {"host_ts", 72.0},
                            {"host_stddev_ts", 0.125},
                            {"host_ratio", 0.75}}));
}

TEST(BenchCompare, WithoutAHostTheTableHasNoHostColumns) {
  auto rows = compare_bench(fixture("guest-stock.json"), fixture("guest-unlocked.json"), {});
  ASSERT_TRUE(rows.ok());
  EXPECT_FALSE(rows.value()[0].host_ts.has_value());
  EXPECT_FALSE(to_json(rows.value()[0]).contains("host_ratio"));
  EXPECT_EQ(render_bench_table(rows.value()),
            "test      stock t/s   unlocked t/s  speedup\n"
            "pp512  80.12 ± 1.50  801.25 ± 3.75   10.00x\n"
            "tg128   4.50 ± 0.25   54.00 ± 0.50   12.00x\n");
}

TEST(BenchCompare, DifferentTestsOrAZeroStockFigureAreRefused) {
  auto different = compare_bench({test_of(512, 0, 10)}, {test_of(256, 0, 20)}, {});
  ASSERT_FALSE(different.ok());
  EXPECT_EQ(different.error().category(), ErrorCategory::verification);
  EXPECT_NE(different.error().message().find("they measured different tests (stock: pp512; "
                                             "unlocked: pp256)"),
            std::string::npos);
  EXPECT_FALSE(
      compare_bench({test_of(512, 0, 10)}, {test_of(512, 0, 1), test_of(0, 8, 1)}, {}).ok());
  auto zero = compare_bench({test_of(512, 0, 0)}, {test_of(512, 0, 20)}, {});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message().find("the stock run's pp512 is 0 t/s"), std::string::npos);
  auto unrelated_host =
      compare_bench({test_of(512, 0, 10)}, {test_of(512, 0, 20)}, std::vector{test_of(0, 64, 30)});
  ASSERT_FALSE(unrelated_host.ok());
  EXPECT_NE(unrelated_host.error().message().find("it has none of the guest's tests (host: tg64"),
            std::string::npos);
  // A host run with only some of the tests: those rows get host figures, the others none.
  auto partial = compare_bench({test_of(512, 0, 10), test_of(0, 64, 1)},
                               {test_of(512, 0, 20), test_of(0, 64, 4)},
                               std::vector{test_of(0, 64, 5)});
  ASSERT_TRUE(partial.ok());
  EXPECT_FALSE(partial.value()[0].host_ratio.has_value());
  EXPECT_DOUBLE_EQ(*partial.value()[1].host_ratio, 0.8);
}

// The figures: the published JSON files give TinyLlama 11.1x/17.1x and Gemma 4 12B
// 7.20x/14.48x, and Gemma's unlocked guest 99.6 % (pp512) and 94.9 % (tg128) of its host.
TEST(BenchCompare, PublishedOutputsGiveThePublishedRatios) {
  const auto tiny_stock = test::find_evidence("tiny-stock-minimal.json");
  const auto tiny_shim = test::find_evidence("tiny-safe-shim-10x-final.json");
  const auto gemma_stock = test::find_evidence("gemma4-stock-10x.json");
  const auto gemma_shim = test::find_evidence("gemma4-safe-shim-10x.json");
  const auto gemma_host = test::find_evidence("gemma4-host-10x.json");
  if (!tiny_stock || !tiny_shim || !gemma_stock || !gemma_shim || !gemma_host) {
    GTEST_SKIP() << "the published llama-bench outputs are not on this machine (looked under "
                 << test::evidence_places() << ")";
  }
  auto tiny = compare_bench(load(*tiny_stock), load(*tiny_shim), {});
  ASSERT_TRUE(tiny.ok());
  EXPECT_NEAR(tiny.value()[0].speedup, 11.096, 0.001);
  EXPECT_NEAR(tiny.value()[1].speedup, 17.083, 0.001);
  auto gemma = compare_bench(load(*gemma_stock), load(*gemma_shim), load(*gemma_host));
  ASSERT_TRUE(gemma.ok());
  EXPECT_NEAR(gemma.value()[0].speedup, 7.199, 0.001);
  EXPECT_NEAR(gemma.value()[1].speedup, 14.484, 0.001);
  EXPECT_NEAR(*gemma.value()[0].host_ratio * 100, 99.6, 0.05);
  EXPECT_NEAR(*gemma.value()[1].host_ratio * 100, 94.9, 0.05);
}

} // namespace
} // namespace lume_unlock::verify
