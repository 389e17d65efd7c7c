#include "verify/bench.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>

namespace lume_unlock::verify {
namespace {

using ::testing::HasSubstr;

// As tools/perplexity/perplexity.cpp prints them (docs/sources.md): LOG() to stdout, LOG_INF()
// and LOG_ERR() to stderr.
const char* k_stdout = "0.03 minutes\n[1]9.8731,[2]10.0210,[3]9.9012,\n\n";
const char* k_stderr = "perplexity: tokenizing the input ..\n"
                       "perplexity: calculating perplexity over 3 chunks, n_ctx=512, "
                       "batch_size=512, n_seq=1\n"
                       "perplexity: 0.50 seconds per pass - ETA \n"
                       "Final estimate: PPL = 9.9012 +/- 0.41234\n"
                       "llama_perf_context_print:        load time =     120.00 ms\n";

PerplexityRun run_of(double estimate) {
  PerplexityRun run;
  run.chunks = {estimate};
  run.estimate = estimate;
  return run;
}

TEST(Perplexity, ReadsChunksFromStdoutAndTheFinalEstimateFromStderr) {
  const auto run = parse_llama_perplexity(k_stdout, k_stderr);
  EXPECT_EQ(run.chunks, (std::vector<double>{9.8731, 10.0210, 9.9012}));
  ASSERT_TRUE(run.estimate);
  EXPECT_DOUBLE_EQ(*run.estimate, 9.9012);
  ASSERT_TRUE(run.uncertainty);
  EXPECT_DOUBLE_EQ(*run.uncertainty, 0.41234);
  EXPECT_FALSE(run.too_short);
}

TEST(Perplexity, TheFinalEstimateOnStdoutIsNotReadAsOne) {
  // Each line on its own stream: a Final estimate among the chunk values is not the tool's.
  const auto run = parse_llama_perplexity(std::string(k_stdout) + "Final estimate: PPL = 1.0 "
                                                                  "+/- 0.1\n",
                                          "");
  EXPECT_FALSE(run.estimate);
  EXPECT_EQ(run.chunks.size(), 3u);
}

TEST(Perplexity, ReadsAHostRunSavedAsOneStream) {
  const std::string both = std::string(k_stderr) + k_stdout;
  const auto run = parse_llama_perplexity(both, both);
  EXPECT_EQ(run.chunks.size(), 3u);
  EXPECT_DOUBLE_EQ(run.estimate.value_or(0), 9.9012);
}

TEST(Perplexity, ChunkValuesStopAtAGapOrAValueThatIsNotAFigure) {
  EXPECT_EQ(parse_llama_perplexity("[1]5.5,[3]6.0,", "").chunks, std::vector<double>{5.5});
  EXPECT_EQ(parse_llama_perplexity("[1]5.5,[2]nan,[3]6.0,", "").chunks, std::vector<double>{5.5});
  EXPECT_EQ(parse_llama_perplexity("[1]inf,", "").chunks, std::vector<double>{});
  EXPECT_EQ(parse_llama_perplexity("[1]5.5", "").chunks, std::vector<double>{});
  EXPECT_FALSE(parse_llama_perplexity("", "Final estimate: PPL = nan +/- nan\n").estimate);
  EXPECT_FALSE(parse_llama_perplexity("", "Final estimate: PPL = -3 +/- 1\n").estimate);
}

TEST(Perplexity, ATextTooShortLeavesNoFiguresAndSaysWhy) {
  const auto run = parse_llama_perplexity(
      "\n",
      "perplexity: tokenizing the input ..\n"
      "perplexity: you need at least 1024 tokens to evaluate perplexity with a context of 512\n"
      "perplexity: the data file you provided tokenizes to only 300 tokens\n");
  EXPECT_TRUE(run.chunks.empty());
  EXPECT_FALSE(run.estimate);
  ASSERT_TRUE(run.too_short);
  EXPECT_THAT(*run.too_short, HasSubstr("you need at least 1024 tokens"));
}

TEST(Perplexity, ReadsADriftAsAFractionOrAPercentage) {
  EXPECT_DOUBLE_EQ(parse_perplexity_drift("0.02", "x").value(), 0.02);
  EXPECT_DOUBLE_EQ(parse_perplexity_drift("2%", "x").value(), 0.02);
  for (const char* bad : {"", "0", "1.5", "-0.1", "2x", "0.02 ", "nan", "1e-2"}) {
    auto parsed = parse_perplexity_drift(bad, "bench --max-perplexity-drift");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().category(), ErrorCategory::usage);
  }
}

TEST(Perplexity, WithinTheToleranceTheGatePasses) {
  PerplexityComparison c;
  c.stock = run_of(9.869);
  c.unlocked = run_of(9.873);
  EXPECT_TRUE(gate_perplexity(c).empty());
  EXPECT_NEAR(perplexity_drift(c.stock, c.unlocked).value(), 0.004 / 9.869, 1e-12);
}

TEST(Perplexity, ADriftAboveTheToleranceFailsNamingBothNumbers) {
  PerplexityComparison c;
  c.stock = run_of(9.869);
  c.unlocked = run_of(24.7243);
  const auto failures = gate_perplexity(c);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_THAT(failures[0], HasSubstr("24.7243")) << failures[0];
  EXPECT_THAT(failures[0], HasSubstr("9.8690")) << failures[0];
  EXPECT_THAT(failures[0], HasSubstr("bench.max_perplexity_drift 2.00%")) << failures[0];
  c.max_drift = 2; // the limit is the recipe's, not ours
  EXPECT_TRUE(gate_perplexity(c).empty());
}

TEST(Perplexity, ARunWithoutAFinalEstimateFails) {
  PerplexityComparison c;
  c.stock = run_of(9.869);
  c.unlocked.chunks = {9.9, 12.0};
  const auto failures = gate_perplexity(c);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_THAT(failures[0], HasSubstr("unlocked llama-perplexity run printed no 'Final estimate'"))
      << failures[0];
  EXPECT_THAT(failures[0], HasSubstr("12.0000")) << failures[0];
  c.unlocked = PerplexityRun{};
  c.unlocked.too_short = "'perplexity: you need at least 1024 tokens'";
  EXPECT_THAT(gate_perplexity(c)[0], HasSubstr("you need at least 1024 tokens"));
}

TEST(Perplexity, AHostFigureIsGatedTheSameWay) {
  PerplexityComparison c;
  c.stock = run_of(9.869);
  c.unlocked = run_of(9.873);
  c.host = run_of(11.0);
  const auto failures = gate_perplexity(c);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_THAT(failures[0], HasSubstr("the host's 11.0000")) << failures[0];
  c.host = PerplexityRun{};
  EXPECT_THAT(gate_perplexity(c).at(0), HasSubstr("host's llama-perplexity output has no"));
}

TEST(Perplexity, RecordAndPhrase) {
  PerplexityComparison c;
  c.stock = run_of(9.869);
  c.unlocked = run_of(9.873);
  c.host = run_of(9.870);
  const auto json = to_json(c);
  EXPECT_EQ(json["context"], 512);
  EXPECT_EQ(json["batch"], 512);
  EXPECT_DOUBLE_EQ(json["stock"]["estimate"].get<double>(), 9.869);
  EXPECT_EQ(json["unlocked"]["chunks"].size(), 1u);
  EXPECT_TRUE(json.contains("drift"));
  EXPECT_TRUE(json.contains("host_drift"));
  EXPECT_EQ(perplexity_phrase(json), "perplexity 9.873 vs 9.869 on CPU, 9.870 on the host");
  EXPECT_EQ(perplexity_phrase(nlohmann::json::object()), "");
  EXPECT_EQ(perplexity_phrase(nlohmann::json{{"stock", {{"estimate", "x"}}}}), "");
}

TEST(Perplexity, TheShippedTextIsCompiledInAndLongEnoughForTwoContexts) {
  std::ifstream in(LUME_UNLOCK_PERPLEXITY_TEXT_FILE, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(perplexity_text(), file);
  // Every tokenizer gives at least one token per word; 2 × n_ctx is what one chunk needs.
  std::istringstream words{std::string(perplexity_text())};
  std::size_t count = 0;
  for (std::string word; words >> word;) {
    ++count;
  }
  EXPECT_GE(count, 2u * static_cast<std::size_t>(k_perplexity_context) * 2);
}

} // namespace
} // namespace lume_unlock::verify
