#include "composed_report.hpp"
#include "report/report.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::report {
namespace {

TEST(ReportMarkdown, AnswersWhatHowFastOnWhatAndHowToReproduceInThatOrder) {
  const std::string md = render_report_markdown(composed_report(true));
  const auto at = [&](const std::string& part) { return md.find(part); };
  ASSERT_NE(at("## What was measured"), std::string::npos) << md;
  EXPECT_LT(at("## What was measured"), at("## How fast"));
  EXPECT_LT(at("## How fast"), at("## On what"));
  EXPECT_LT(at("## On what"), at("## How to reproduce and re-check"));
  EXPECT_LT(at("## How to reproduce and re-check"), at("## Raw inputs"));
  EXPECT_NE(at("| pp512 | 50.00 ± 0.50 | 450.00 ± 4.25 | 9.00x | 500.00 ± 2.00 | 90.0% |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(at("| tg128 | 3.00 ± 0.10 | 36.00 ± 0.30 | 12.00x | 48.00 ± 0.20 | 75.0% |\n"),
            std::string::npos);
  EXPECT_NE(at("| image digest | `sha256:" + std::string(64, 'a') + "` |\n"), std::string::npos);
  EXPECT_NE(at("| host | not a Mac: its macOS version, chip and GPU cores are not known |\n"),
            std::string::npos);
  EXPECT_NE(at("| 1009 | false | true |\n"), std::string::npos);
  EXPECT_NE(at("Threadgroup memory: 32768 → 65536 bytes.\n"), std::string::npos);
  EXPECT_NE(at("lume-unlock pull ghcr.io/acme/tahoe:1@sha256:"), std::string::npos);
  EXPECT_NE(at("lume-unlock bench demo --model '/m/q.gguf' -p 512 -n 128 -r 3\n"),
            std::string::npos);
  EXPECT_NE(at("| `provenance.json` | `" +
               std::string("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a") +
               "` | 2 | `/state/vms/demo/provenance.json` |\n"),
            std::string::npos)
      << md;
}

TEST(ReportMarkdown, SaysWhetherTheUnlockedGpuIsCorrect) {
  const std::string md = render_report_markdown(composed_report(true));
  EXPECT_NE(md.find("**Correct?** llama-perplexity on the shipped text (`-c 512 -b 512`)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| stock, CPU (-ngl 0) | 9.8690 | 9.7021, 9.8690 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| unlocked, GPU | 9.8730 | 9.7049, 9.8730 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Drift 0.040% (allowed 2.00%)."), std::string::npos) << md;
}

TEST(ReportMarkdown, WithoutABenchSaysSoAndStillListsTheShim) {
  const std::string md = render_report_markdown(composed_report(false));
  EXPECT_NE(md.find("Nothing was benchmarked in this VM; the report holds its provenance only.\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("No bench run: no bench run is recorded for VM 'demo'"), std::string::npos);
  EXPECT_NE(md.find("liblume-unlock-shim.dylib` | `" + std::string(64, 'b') + "` |"),
            std::string::npos);
  EXPECT_EQ(md.find("speedup.svg"), std::string::npos);
  EXPECT_NE(md.find("| shim that ran | lume-unlock shim " + std::string(64, 'b') + " |\n"),
            std::string::npos)
      << md;
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
  EXPECT_NE(render_report_markdown(report).find(
                "| shim that ran | certified upstream build 515b9d84… |\n"),
            std::string::npos);
}

} // namespace
} // namespace lume_unlock::report
