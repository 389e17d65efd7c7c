#include "cli/progress_renderer.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace lume_unlock::cli {
namespace {

using namespace std::chrono_literals;

struct FakeClock {
  std::chrono::steady_clock::time_point now{};
};

util::ProgressEvent bytes_event(std::uint64_t done, std::uint64_t total, bool finished = false) {
  util::ProgressEvent e;
  e.step = "pull";
  e.done = done;
  e.total = total;
  e.unit = "bytes";
  e.finished = finished;
  return e;
}

TEST(ProgressRenderer, FormatsABarWithSizes) {
  EXPECT_EQ(ProgressRenderer::format(bytes_event(5'000'000'000, 10'000'000'000)),
            "pull   50% [############............] 5.0 GB / 10.0 GB");
  util::ProgressEvent wait;
  wait.step = "boot";
  wait.detail = "waiting for SSH on 192.168.64.9";
  EXPECT_EQ(ProgressRenderer::format(wait), "boot  waiting for SSH on 192.168.64.9");
}

TEST(ProgressRenderer, PlainOutputIsThrottledToOneLineASecondPerStep) {
  std::ostringstream out, err;
  Context context(out, err, false, false);
  FakeClock clock;
  ProgressRenderer render(context, [&] { return clock.now; });
  render(bytes_event(1, 100));
  clock.now += 200ms;
  render(bytes_event(2, 100)); // throttled
  clock.now += 900ms;
  render(bytes_event(3, 100)); // a second has passed
  clock.now += 10ms;
  render(bytes_event(100, 100, true)); // the final line always prints
  EXPECT_EQ(err.str(),
            "pull    1% [........................] 1 B / 100 B\n"
            "pull    3% [........................] 3 B / 100 B  1 B/s  ETA 54s\n"
            "pull  100% [########################] 100 B / 100 B  89 B/s  done\n");
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressRenderer, FormatsRateAndTimeLeftForBytes) {
  EXPECT_EQ(ProgressRenderer::format(bytes_event(2'000'000'000, 10'000'000'000), 50e6),
            "pull   20% [####....................] 2.0 GB / 10.0 GB  50.0 MB/s  ETA 2m40s");
  // Finished: the average rate, no time left. No total: the rate alone.
  EXPECT_EQ(ProgressRenderer::format(bytes_event(10, 10, true), 5.0),
            "pull  100% [########################] 10 B / 10 B  5 B/s  done");
  util::ProgressEvent open_ended;
  open_ended.step = "model.gguf";
  open_ended.done = 3'000'000;
  open_ended.unit = "bytes";
  EXPECT_EQ(ProgressRenderer::format(open_ended, 1.5e6), "model.gguf  3.0 MB  1.5 MB/s");
  // A rate below a byte a second says nothing.
  EXPECT_EQ(ProgressRenderer::format(bytes_event(1, 10), 0.5),
            "pull   10% [##......................] 1 B / 10 B");
}

TEST(ProgressRenderer, RateIsMeasuredFromTheStepsFirstEventNotFromZero) {
  std::ostringstream out, err;
  Context context(out, err, false, false);
  FakeClock clock;
  ProgressRenderer render(context, [&] { return clock.now; });
  // A download resumed at 4 GB: the 4 GB already on disk are not part of the rate.
  render(bytes_event(4'000'000'000, 10'000'000'000));
  clock.now += 2s;
  render(bytes_event(4'100'000'000, 10'000'000'000));
  EXPECT_EQ(err.str(),
            "pull   40% [#########...............] 4.0 GB / 10.0 GB\n"
            "pull   41% [#########...............] 4.1 GB / 10.0 GB  50.0 MB/s  ETA 1m58s\n");
}

TEST(HumanDuration, RoundsUpAndUsesTwoUnits) {
  EXPECT_EQ(human_duration(0), "0s");
  EXPECT_EQ(human_duration(0.2), "1s");
  EXPECT_EQ(human_duration(59), "59s");
  EXPECT_EQ(human_duration(60), "1m00s");
  EXPECT_EQ(human_duration(185), "3m05s");
  EXPECT_EQ(human_duration(7620), "2h07m");
}

TEST(ProgressRenderer, TerminalOutputOverprintsOneLine) {
  std::ostringstream out, err;
  Context context(out, err, false, true);
  FakeClock clock;
  ProgressRenderer render(context, [&] { return clock.now; });
  render(bytes_event(10, 100));
  clock.now += 10ms;
  render(bytes_event(20, 100));
  render(bytes_event(100, 100, true));
  const std::string s = err.str();
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1);
  EXPECT_EQ(std::count(s.begin(), s.end(), '\r'), 3);
}

TEST(ProgressRenderer, JsonLinesGoToStderrAndStdoutStaysClean) {
  std::ostringstream out, err;
  Context context(out, err, false, false);
  context.global.json = true;
  ProgressRenderer render(context);
  render(bytes_event(100, 100, true));
  EXPECT_EQ(err.str(),
            "{\"progress\":{\"done\":100,\"finished\":true,\"step\":\"pull\",\"total\":100,"
            "\"unit\":\"bytes\"}}\n");
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressRenderer, QuietPrintsNothing) {
  std::ostringstream out, err;
  Context context(out, err, false, true);
  context.global.verbosity = Verbosity::quiet;
  ProgressRenderer render(context);
  render(bytes_event(1, 2, true));
  EXPECT_EQ(err.str(), "");
}

TEST(HumanBytes, UsesDecimalUnits) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(999), "999 B");
  EXPECT_EQ(human_bytes(1500), "1.5 kB");
  EXPECT_EQ(human_bytes(17179869184ULL), "17.2 GB");
}

} // namespace
} // namespace lume_unlock::cli
