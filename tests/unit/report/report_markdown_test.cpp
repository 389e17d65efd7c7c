#include "composed_report.hpp"
#include "report/report_markdown.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ReportMarkdown, AnswersWhatHowFastOnWhatAndHowToReproduceInThatOrder) {
  const std::string md = render_report_markdown(composed_report(true));
  const auto at = [&](const std::string& part) { return md.find(part); };
  ASSERT_THAT(md, HasSubstr("## What was measured"));
  EXPECT_LT(at("## What was measured"), at("## How fast"));
  EXPECT_LT(at("## How fast"), at("## On what"));
  EXPECT_LT(at("## On what"), at("## How to reproduce and re-check"));
  EXPECT_LT(at("## How to reproduce and re-check"), at("## Raw inputs"));
  EXPECT_THAT(
      md, HasSubstr("| pp512 | 50.00 ± 0.50 | 450.00 ± 4.25 | 9.00x | 500.00 ± 2.00 | 90.0% |\n"))
      << md;
  EXPECT_THAT(
      md, HasSubstr("| tg128 | 3.00 ± 0.10 | 36.00 ± 0.30 | 12.00x | 48.00 ± 0.20 | 75.0% |\n"));
  EXPECT_THAT(md, HasSubstr("| image digest | `sha256:" + std::string(64, 'a') + "` |\n"));
  EXPECT_THAT(
      md, HasSubstr("| host | not a Mac: its macOS version, chip and GPU cores are not known |\n"));
  EXPECT_THAT(md, HasSubstr("| 1009 | false | true |\n"));
  EXPECT_THAT(md, HasSubstr("Threadgroup memory: 32768 → 65536 bytes.\n"));
  EXPECT_THAT(md, HasSubstr("lume-unlock pull ghcr.io/acme/tahoe:1@sha256:"));
  EXPECT_THAT(md, HasSubstr("lume-unlock bench demo --model '/m/q.gguf' -p 512 -n 128 -r 3\n"));
  EXPECT_THAT(
      md,
      HasSubstr("| `provenance.json` | `" +
                std::string("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a") +
                "` | 2 | `/state/vms/demo/provenance.json` |\n"))
      << md;
}

TEST(ReportMarkdown, SaysWhetherTheUnlockedGpuIsCorrect) {
  const std::string md = render_report_markdown(composed_report(true));
  EXPECT_THAT(md, HasSubstr("**Correct?** llama-perplexity on the shipped text (`-c 512 -b 512`)"));
  EXPECT_THAT(md, HasSubstr("| stock, CPU (-ngl 0) | 9.8690 | 9.7021, 9.8690 |"));
  EXPECT_THAT(md, HasSubstr("| unlocked, GPU | 9.8730 | 9.7049, 9.8730 |"));
  EXPECT_THAT(md, HasSubstr("Drift 0.040% (allowed 2.00%)."));
}

TEST(ReportMarkdown, WithoutABenchSaysSoAndStillListsTheShim) {
  const std::string md = render_report_markdown(composed_report(false));
  EXPECT_THAT(
      md, HasSubstr("Nothing was benchmarked in this VM; the report holds its provenance only.\n"))
      << md;
  EXPECT_THAT(md, HasSubstr("No bench run: no bench run is recorded for VM 'demo'"));
  EXPECT_THAT(md, HasSubstr("liblume-unlock-shim.dylib` | `" + std::string(64, 'b') + "` |"));
  EXPECT_THAT(md, Not(HasSubstr("speedup.svg")));
  EXPECT_THAT(md, HasSubstr("| shim that ran | lume-unlock shim " + std::string(64, 'b') + " |\n"));
}

TEST(ReportMarkdown, TheCertifiedUpstreamBuildIsNamedAsSuch) {
  ReportInputs inputs;
  inputs.record = composed_record(false);
  const std::string certified = "515b9d84ab67e86d959282e95c194a5ad8a947261514b947d6f7483c57797b31";
  inputs.record.shim->files->front().sha256 = certified;
  inputs.record.shim->external =
      provenance::FileHash{"dist/LumeMetalCapabilities-arm64.dylib", certified};
  const nlohmann::json report = build_report(inputs);
  EXPECT_EQ(report["shim"]["ran"], "certified upstream build 515b9d84…");
  EXPECT_EQ(report["shim"]["external"]["dylib"], "dist/LumeMetalCapabilities-arm64.dylib");
  EXPECT_THAT(render_report_markdown(report),
              HasSubstr("| shim that ran | certified upstream build 515b9d84… |\n"));
}

} // namespace
} // namespace lume_unlock::report
