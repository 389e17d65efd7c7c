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
            "pull    3% [........................] 3 B / 100 B\n"
            "pull  100% [########################] 100 B / 100 B  done\n");
  EXPECT_EQ(out.str(), "");
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
