#include "support/evidence.hpp"
#include "util/atomic_file.hpp"
#include "verify/bench.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock::verify {
namespace {

using testing::HasSubstr;

std::string fixture(const std::string& name) {
  auto text = util::read_file(std::string(LUME_UNLOCK_FIXTURES_DIR) + "/llama-bench/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? text.value() : std::string();
}

std::string error_of(std::string_view text) {
  auto parsed = parse_llama_bench_json(text, "the stock run");
  EXPECT_FALSE(parsed.ok()) << text;
  if (parsed.ok()) {
    return {};
  }
  EXPECT_EQ(parsed.error().category(), ErrorCategory::verification);
  EXPECT_EQ(parsed.error().hint(),
            "run llama-bench with '-o json' and check that it finished (a killed or crashed run "
            "leaves a partial document)");
  return parsed.error().message();
}

/// One test object with the required fields, plus `extra` (",\"key\": value" pairs).
std::string one(const std::string& fields) {
  return "[{" + fields + "}]";
}

TEST(LlamaBench, ComposedFixturesReadEveryFigureExactly) {
  auto stock = parse_llama_bench_json(fixture("guest-stock.json"), "guest-stock.json");
  ASSERT_TRUE(stock.ok()) << stock.error().message();
  ASSERT_EQ(stock.value().size(), 2u);
  const LlamaBenchTest& pp = stock.value()[0];
  EXPECT_EQ(pp.name(), "pp512");
  EXPECT_EQ(pp.kind(), "pp");
  EXPECT_EQ(pp.n_prompt, 512);
  EXPECT_EQ(pp.n_gen, 0);
  EXPECT_EQ(pp.avg_ts, 80.125);
  EXPECT_EQ(pp.stddev_ts, 1.5);
  EXPECT_EQ(pp.backends, "MTL,BLAS");
  EXPECT_EQ(pp.gpu_info, "Apple Paravirtual device");
  EXPECT_EQ(pp.cpu_info, "Accelerate, Apple M2 Max (Virtual)");
  EXPECT_EQ(pp.model_type, "composed 1B Q4_0");
  EXPECT_EQ(pp.build_commit, "0badc0de1");
  const LlamaBenchTest& tg = stock.value()[1];
  EXPECT_EQ(tg.name(), "tg128");
  EXPECT_EQ(tg.kind(), "tg");
  EXPECT_EQ(tg.avg_ts, 4.5);
  EXPECT_EQ(tg.stddev_ts, 0.25);

  auto host = parse_llama_bench_json(fixture("host.json"), "host.json");
  ASSERT_TRUE(host.ok()) << host.error().message();
  EXPECT_EQ(host.value()[0].gpu_info, "Apple M2 Max");
  EXPECT_EQ(host.value()[1].avg_ts, 72.0);
}

TEST(LlamaBench, PublishedOutputsReadEveryFigureExactly) {
  struct Case {
    const char* file;
    double pp_ts, pp_sd, tg_ts, tg_sd;
    const char* gpu;
    const char* model;
  };
  const std::string pv = "Apple Paravirtual device";
  const Case cases[] = {
      {"tiny-stock-minimal.json",
       431.322577,
       2.036988,
       11.996419,
       1.326353,
       "Apple Paravirtual device",
       "llama 1B Q4_K - Medium"},
      {"tiny-safe-shim-10x-final.json",
       4785.823751,
       25.060378,
       204.935887,
       7.108683,
       "Apple Paravirtual device",
       "llama 1B Q4_K - Medium"},
      {"gemma4-stock-10x.json",
       71.622375,
       1.007282,
       3.428969,
       0.045180,
       "Apple Paravirtual device",
       "gemma4 ?B Q4_0"},
      {"gemma4-safe-shim-10x.json",
       515.578065,
       0.830612,
       49.666230,
       0.086480,
       "Apple Paravirtual device",
       "gemma4 ?B Q4_0"},
      {"gemma4-host-10x.json",
       517.726332,
       0.573097,
       52.353261,
       0.171517,
       "Apple M1 Ultra",
       "gemma4 ?B Q4_0"},
  };
  int found = 0;
  for (const Case& c : cases) {
    const auto path = test::find_evidence(c.file);
    if (!path) {
      continue;
    }
    ++found;
    auto text = util::read_file(*path);
    ASSERT_TRUE(text.ok()) << *path;
    auto parsed = parse_llama_bench_json(text.value(), c.file);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    ASSERT_EQ(parsed.value().size(), 2u) << c.file;
    const auto& pp = parsed.value()[0];
    const auto& tg = parsed.value()[1];
    EXPECT_EQ(pp.name(), "pp512") << c.file;
    EXPECT_EQ(tg.name(), "tg128") << c.file;
    EXPECT_EQ(pp.n_prompt, 512);
    EXPECT_EQ(tg.n_gen, 128);
    EXPECT_EQ(pp.avg_ts, c.pp_ts) << c.file;
    EXPECT_EQ(pp.stddev_ts, c.pp_sd) << c.file;
    EXPECT_EQ(tg.avg_ts, c.tg_ts) << c.file;
    EXPECT_EQ(tg.stddev_ts, c.tg_sd) << c.file;
    EXPECT_EQ(pp.gpu_info, c.gpu) << c.file;
    EXPECT_EQ(pp.model_type, c.model) << c.file;
    EXPECT_EQ(pp.backends, "MTL,BLAS") << c.file;
    EXPECT_EQ(pp.build_commit, "ee3d1b54c") << c.file;
  }
  if (found == 0) {
    GTEST_SKIP() << "the published llama-bench outputs are not on this machine (looked under "
                 << test::evidence_places() << ")";
  }
  EXPECT_EQ(found, 5) << "some published outputs are missing";
}

TEST(LlamaBench, TestNamesFollowLlamaBench) {
  auto parsed = parse_llama_bench_json(
      "[{\"n_prompt\":512,\"n_gen\":128,\"avg_ts\":1,\"stddev_ts\":0},"
      "{\"n_prompt\":0,\"n_gen\":32,\"n_depth\":4096,\"avg_ts\":2,\"stddev_ts\":0}]",
      "x");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value()[0].name(), "pp512+tg128");
  EXPECT_EQ(parsed.value()[0].kind(), "pg");
  EXPECT_EQ(parsed.value()[1].name(), "tg32 @ d4096");
  EXPECT_FALSE(parsed.value()[1].gpu_info.has_value());
}

TEST(LlamaBench, EmptyTruncatedAndMalformedOutputIsAClearError) {
  EXPECT_EQ(error_of(""),
            "reading llama-bench JSON from the stock run: it is empty: llama-bench printed no "
            "JSON");
  EXPECT_THAT(error_of(" \n\t"), HasSubstr("it is empty"));

  const std::string whole = fixture("guest-stock.json");
  for (std::size_t cut : {std::size_t(1), whole.size() / 3, whole.size() / 2, whole.size() - 3}) {
    EXPECT_THAT(
        error_of(whole.substr(0, cut)),
        HasSubstr("it ends early, after " + std::to_string(cut) + " bytes: the JSON is truncated"))
        << cut;
  }
  EXPECT_THAT(error_of("| model | size |\n"), HasSubstr("it is not JSON (at byte 1: '| model"));
  EXPECT_EQ(error_of("[{\"n_prompt\": 512,, }]"),
            "reading llama-bench JSON from the stock run: it is not JSON (at byte 19: ', }]')");
  EXPECT_THAT(
      error_of("{\"n_prompt\":512}"),
      HasSubstr(
          "/: expected the array of tests '-o json' prints (was it '-o jsonl'?), got an object"));
  EXPECT_THAT(error_of("[]"), HasSubstr("it holds no tests"));
  EXPECT_THAT(error_of("[3]"), HasSubstr("/0: expected an object, got an integer"));
}

TEST(LlamaBench, MissingAndMistypedFiguresNameTheTestAndField) {
  const std::string ok = "\"n_prompt\":512,\"n_gen\":0,\"avg_ts\":1.5,\"stddev_ts\":0.1";
  ASSERT_TRUE(parse_llama_bench_json(one(ok), "x").ok());
  EXPECT_THAT(error_of(one("\"n_gen\":0,\"avg_ts\":1,\"stddev_ts\":0")),
              HasSubstr("/0/n_prompt: missing (expected an integer)"));
  EXPECT_THAT(error_of("[{" + ok + "},{\"n_prompt\":0,\"n_gen\":128,\"stddev_ts\":0}]"),
              HasSubstr("/1/avg_ts: missing (expected a number)"));
  EXPECT_THAT(error_of(one("\"n_prompt\":\"512\",\"n_gen\":0,\"avg_ts\":1,\"stddev_ts\":0")),
              HasSubstr("/0/n_prompt: expected an integer, got a string"));
  EXPECT_THAT(error_of(one("\"n_prompt\":512.5,\"n_gen\":0,\"avg_ts\":1,\"stddev_ts\":0")),
              HasSubstr("/0/n_prompt: expected an integer, got a fractional number"));
  EXPECT_THAT(error_of(one("\"n_prompt\":-1,\"n_gen\":0,\"avg_ts\":1,\"stddev_ts\":0")),
              HasSubstr("/0/n_prompt: -1 is outside 0..2^40"));
  EXPECT_THAT(error_of(one("\"n_prompt\":18446744073709551615,\"n_gen\":0,\"avg_ts\":1,"
                           "\"stddev_ts\":0")),
              HasSubstr("outside 0..2^40"));
  EXPECT_THAT(error_of(one("\"n_prompt\":512,\"n_gen\":0,\"avg_ts\":-3,\"stddev_ts\":0")),
              HasSubstr("/0/avg_ts: -3 is not a finite figure of at least 0"));
  EXPECT_THAT(error_of(one("\"n_prompt\":512,\"n_gen\":0,\"avg_ts\":null,\"stddev_ts\":0")),
              HasSubstr("/0/avg_ts: expected a number, got null"));
  EXPECT_THAT(error_of(one(ok + ",\"gpu_info\":7")),
              HasSubstr("/0/gpu_info: expected a string, got an integer"));
  EXPECT_THAT(error_of(one("\"n_prompt\":0,\"n_gen\":0,\"avg_ts\":1,\"stddev_ts\":0")),
              HasSubstr("it measured nothing"));
  EXPECT_THAT(error_of("[{" + ok + "},{" + ok + "}]"), HasSubstr("/1: repeats pp512"));
}

TEST(LlamaBench, SamplesAreReadInRunOrderAndMayBeAbsent) {
  auto stock = parse_llama_bench_json(fixture("guest-stock.json"), "guest-stock.json");
  ASSERT_TRUE(stock.ok()) << stock.error().message();
  EXPECT_EQ(stock.value()[0].samples_ts, (std::vector<double>{78.625, 80.125, 81.625}));
  const std::string ok = "\"n_prompt\":512,\"n_gen\":0,\"avg_ts\":1.5,\"stddev_ts\":0.1";
  // An older llama-bench prints no samples: the test is read, its samples are empty.
  for (const std::string& absent : {ok, ok + ",\"samples_ts\":null", ok + ",\"samples_ts\":[]"}) {
    auto parsed = parse_llama_bench_json(one(absent), "x");
    ASSERT_TRUE(parsed.ok()) << absent;
    EXPECT_TRUE(parsed.value()[0].samples_ts.empty()) << absent;
  }
  EXPECT_EQ(
      parse_llama_bench_json(one(ok + ",\"samples_ts\":[3, 1.5, 2]"), "x").value()[0].samples_ts,
      (std::vector<double>{3, 1.5, 2}));
  EXPECT_THAT(error_of(one(ok + ",\"samples_ts\":1.5")),
              HasSubstr("/0/samples_ts: expected an array, got a fractional number"));
  EXPECT_THAT(error_of(one(ok + ",\"samples_ts\":[1.5, \"fast\"]")),
              HasSubstr("/0/samples_ts/1: expected a number, got a string"));
  EXPECT_THAT(error_of(one(ok + ",\"samples_ts\":[-1]")),
              HasSubstr("/0/samples_ts/0: -1 is not a finite figure"));
}

TEST(LlamaBench, OutputOverTheLimitIsRefusedBeforeParsing) {
  std::string huge = "[";
  huge += std::string(k_max_llama_bench_bytes, ' ');
  huge += "]";
  EXPECT_THAT(error_of(huge), HasSubstr("over the limit of 4 MiB"));
}

} // namespace
} // namespace lume_unlock::verify
