#include "composed_report.hpp"
#include "report/speedup_chart.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SpeedupChart, DrawsEveryFigureRatioAndShareOfHostFromTheReport) {
  const std::string svg = render_speedup_chart(composed_report(true));
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"540\"", 0),
            0u)
      << svg;
  EXPECT_THAT(svg,
              HasSubstr(">llama-bench tokens/s in VM &apos;demo&apos;: stock, unlocked, host — "
                        "llama 1B Q4_K - Medium</text>"));
  EXPECT_THAT(svg,
              HasSubstr(">guest GPU Apple Paravirtual device, host Apple M1 Ultra, llama.cpp "
                        "ee3d1b54c, measured 2026-12-03T10:00:00Z</text>"));
  for (const char* figure : {">50.00<",
                             ">450.00<",
                             ">500.00<",
                             ">3.00<",
                             ">36.00<",
                             ">48.00<",
                             ">9.0x stock<",
                             ">12.0x stock<",
                             ">unlocked at<",
                             ">90.0% of host<",
                             ">75.0% of host<",
                             ">pp512 (pp)<",
                             ">tg128 (tg)<",
                             ">tokens/s<",
                             ">stock (no shim)<",
                             ">unlocked (shim)<",
                             ">host (the Mac)<"}) {
    EXPECT_THAT(svg, HasSubstr(figure)) << figure;
  }
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(SpeedupChart, TheCaptionSaysHowFastAndWhetherItIsCorrect) {
  EXPECT_THAT(render_speedup_chart(composed_report(true)),
              HasSubstr(">unlocked 9.0x (pp512), 12.0x (tg128) faster, perplexity 9.873 vs 9.869 "
                        "on CPU<"));
  auto report = composed_report(true);
  report["bench"].erase("perplexity");
  EXPECT_THAT(render_speedup_chart(report),
              HasSubstr(">unlocked 9.0x (pp512), 12.0x (tg128) faster, perplexity not measured<"));
}

TEST(SpeedupChart, BarsAreScaledToTheirPanelsAxis) {
  // pp512: the highest bar is 500 t/s, the axis ends at 600 (1.15 × 500 rounded up to a step
  // of 100): the host bar is 500/600 of the plot's height.
  const std::string svg = render_speedup_chart(composed_report(true));
  const double plot_height = 540 - 96 - 44 - 34 - 40;
  char expected[64];
  std::snprintf(
      expected, sizeof expected, "height=\"%.1f\" fill=\"#188038\"", 500.0 / 600.0 * plot_height);
  EXPECT_THAT(svg, HasSubstr(expected));
  EXPECT_THAT(svg, HasSubstr(">600</text>"));
  EXPECT_THAT(svg, Not(HasSubstr(">700</text>")));
}

TEST(SpeedupChart, WithoutABenchItSaysSoAndDrawsNoBars) {
  const std::string svg = render_speedup_chart(composed_report(false));
  EXPECT_THAT(svg, HasSubstr(">llama-bench in VM &apos;demo&apos;: no bench run</text>"));
  EXPECT_THAT(svg, HasSubstr("run &apos;lume-unlock bench demo --model PATH&apos;"));
  EXPECT_THAT(svg, Not(HasSubstr("#1a73e8")));
}

} // namespace
} // namespace lume_unlock::report
