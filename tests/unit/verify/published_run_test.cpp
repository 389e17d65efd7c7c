#include "verify/bench.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::verify {
namespace {

/// The published run's request: -p 512 -n 128 -r 10 -t 8 -ngl -1 (docs/sources.md).
BenchRequest published_request() {
  BenchRequest request;
  request.model = "/Users/lume/models/tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf";
  request.repetitions = 10;
  request.threads = 8;
  request.gpu_layers = -1;
  return request;
}

TEST(PublishedRun, TheBenchCommandIsTheFlagsTheGuestRuns) {
  EXPECT_EQ(bench_command(published_request()),
            "llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json");
  EXPECT_EQ(bench_command(BenchRequest{}), "llama-bench -p 512 -n 128 -r 3 -o json");
}

TEST(PublishedRun, TheSameFlagsInAnyOrderWithAnyModelAreThePublishedCommand) {
  const BenchRequest request = published_request();
  for (const char* command : {"llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json",
                              "./build/bin/llama-bench  -m ../models/x.gguf -p 512 -n 128 -r 10 "
                              "-t 8 -ngl -1 -o json",
                              "llama-bench -o json -ngl -1 -t 8 -r 10 -n 128 -p 512"}) {
    EXPECT_FALSE(published_command_mismatch(request, command).has_value()) << command;
  }
}

TEST(PublishedRun, AnotherFlagOrValueOrProgramIsNamed) {
  BenchRequest fewer = published_request();
  fewer.repetitions = 3;
  EXPECT_EQ(
      published_command_mismatch(fewer, "llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json"),
      "the bench runs 'llama-bench -p 512 -n 128 -r 3 -t 8 -ngl -1 -o json', not the "
      "published 'llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json'");
  BenchRequest defaults = published_request();
  defaults.threads.reset();
  EXPECT_TRUE(
      published_command_mismatch(defaults, "llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json")
          .has_value())
      << "llama-bench's default threads are not -t 8";
  EXPECT_EQ(published_command_mismatch(published_request(), "llama-cli -p 512"),
            "'llama-cli -p 512' is not a llama-bench command (the bench runs 'llama-bench -p 512 "
            "-n 128 -r 10 -t 8 -ngl -1 -o json')");
  EXPECT_EQ(published_command_mismatch(published_request(), "llama-bench -p 512 -o"),
            "'llama-bench -p 512 -o' has a flag without a value");
}

TEST(PublishedRun, TheRecordKeepsFiguresCommandSourceAndStatistic) {
  PublishedRun run;
  run.source = "docs/sources.md";
  run.command = "llama-bench -p 512";
  run.speedup = {{"pp", 7.2}, {"tg", 14.54}};
  run.host_ratio = {{"pp", 0.9959}};
  EXPECT_EQ(to_json(run),
            nlohmann::json({{"source", "docs/sources.md"},
                            {"command", "llama-bench -p 512"},
                            {"statistic", "median of samples_ts"},
                            {"speedup", {{"pp", 7.2}, {"tg", 14.54}}},
                            {"host_ratio", {{"pp", 0.9959}}}}));
}

} // namespace
} // namespace lume_unlock::verify
