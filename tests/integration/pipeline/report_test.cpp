// lume-unlock report and report --check end to end: a stand-in VM after create --bench
// (lume-sim, guest-sim, docker-registry on TLS, the llama-bench stand-in), report.json validated
// against its JSON Schema with python3-jsonschema, speedup.svg rendered with rsvg-convert, and a
// changed guest file caught by --check.
#include "bench_world.hpp"
#include "provenance/provenance.hpp"
#include "support/file_io.hpp"
#include "support/process.hpp"
#include "util/sha256.hpp"

#include <algorithm>
#include <filesystem>

namespace lume_unlock::test {
namespace {

namespace fs = std::filesystem;

class Report : public BenchPipeline {
protected:
  /// report_checks.py's answer (stdout), failing the test when it exits non-zero.
  static std::string report_checks(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/env", "python3", REPORT_CHECKS};
    argv.insert(argv.end(), args.begin(), args.end());
    auto run = run_command(argv);
    EXPECT_EQ(run.exit_status, 0) << run.stdout_text << run.stderr_text;
    return run.stdout_text;
  }

  static void expect_schema_valid(const std::string& dir) {
    report_checks({"schema", REPORT_SCHEMA, dir + "/report.json"});
  }

  std::string out_dir() const { return files / "out/vm1-report"; }
};

TEST_F(Report, AReportOfABenchedVmHoldsItsRecordsRawInputsAndAReadableChart) {
  start_bench_world("min_speedup: 5, host_json: \"" + fixture("host.json") + "\"");
  CliRun created = create({"--bench"});
  ASSERT_EQ(created.exit_code, 0) << created.err << created.out;

  // What the bench kept on the host, named in its record.
  const std::string kept = state.path() + "/vms/vm1/bench";
  auto record = provenance::read_provenance(state.path(), "vm1");
  ASSERT_TRUE(record.ok() && record.value().bench);
  const auto& raw = (*record.value().bench)["raw"];
  for (const char* name : {"stock.json",
                           "stock.stderr",
                           "unlocked.json",
                           "unlocked.stderr",
                           "perplexity-stock.stdout",
                           "perplexity-stock.stderr",
                           "perplexity-unlocked.stdout",
                           "perplexity-unlocked.stderr"}) {
    ASSERT_TRUE(raw.contains(name)) << raw.dump();
    EXPECT_EQ(raw[name]["sha256"], util::sha256_hex(slurp(kept + "/" + name))) << name;
  }
  EXPECT_EQ(slurp(kept + "/host.json"), slurp(fixture("host.json")));

  CliRun planned = cli({"report", "vm1", "--out", out_dir(), "--dry-run"}, false);
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  EXPECT_NE(planned.out.find("  the bench output " + kept + "/host.json (sha256 " +
                             util::sha256_hex(slurp(fixture("host.json"))) + ")\n"),
            std::string::npos)
      << planned.out;
  EXPECT_FALSE(fs::exists(out_dir())) << "a dry run wrote the folder";

  CliRun run = cli({"report", "vm1", "--out", out_dir(), "--label", "stand-in run"}, false);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_NE(run.out.find("report of VM 'vm1' written to " + out_dir() + "/\n"), std::string::npos)
      << run.out;
  const auto report = nlohmann::json::parse(slurp(out_dir() + "/report.json"));
  expect_schema_valid(out_dir());
  // The validator is not a formality: a figure that is not a number fails it.
  auto doctored = report;
  doctored["bench"]["tests"][0]["speedup"] = "fast";
  write_file(files / "doctored.json", doctored.dump(), 0644);
  auto refused = run_command(
      {"/usr/bin/env", "python3", REPORT_CHECKS, "schema", REPORT_SCHEMA, files / "doctored.json"});
  EXPECT_EQ(refused.exit_status, 1) << refused.stdout_text << refused.stderr_text;
  EXPECT_EQ(report["schema"], "lume-unlock/report/v1");
  EXPECT_EQ(report["image"]["digest"], image_digest);
  EXPECT_EQ(report["lume"]["cpu"], 2) << report["lume"].dump();
  EXPECT_EQ(report["lume"]["source"], "GET /lume/vms/vm1");
  EXPECT_EQ(report["host"]["mac"], false);
  EXPECT_EQ(report["host"]["bench_gpu_info"]["value"], "Apple M2 Max") << report["host"];
  EXPECT_EQ(report["bench"]["ran"], true);
  EXPECT_EQ(report["bench"]["tests"][0]["speedup"], 10.0);
  EXPECT_EQ(report["bench"]["tests"][1]["speedup"], 12.0);
  EXPECT_EQ(report["bench"]["tests"], (*record.value().bench)["tests"]) << "figures retyped";
  EXPECT_EQ(report["shim"]["files"], provenance::to_json(record.value())["shim"]["files"]);
  EXPECT_EQ(report["probe"]["threadgroup_memory"]["unlocked"], 65536);
  // Every raw input is in the folder, byte for byte, under the sha256 report.json names.
  ASSERT_EQ(report["raw_inputs"].size(), 10u) << report["raw_inputs"].dump(2);
  for (const auto& input : report["raw_inputs"]) {
    const std::string copied = slurp(out_dir() + "/" + input["name"].get<std::string>());
    EXPECT_EQ(util::sha256_hex(copied), input["sha256"]) << input.dump();
    EXPECT_EQ(copied, slurp(input["source"].get<std::string>())) << input.dump();
  }
  const std::string markdown = slurp(out_dir() + "/report.md");
  EXPECT_NE(markdown.find("| pp512 | 80.12 ± "), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| 10.00x | "), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("![stock, unlocked and host tokens/s](speedup.svg)"), std::string::npos);
  EXPECT_NE(markdown.find("| unlocked, GPU | 11.8274 | "), std::string::npos) << markdown;
  EXPECT_EQ(report["bench"]["perplexity"], (*record.value().bench)["perplexity"]);
  EXPECT_NE(slurp(out_dir() + "/speedup.svg")
                .find(">unlocked 10.0x (pp512), 12.0x (tg128) faster, perplexity 11.827 vs "
                      "11.826 on CPU<"),
            std::string::npos);

  // A real SVG renderer draws the chart at its size, with ink and colours on it.
  const std::string png = files / "speedup.png";
  auto rendered =
      run_command({"/usr/bin/env", "rsvg-convert", "-o", png, out_dir() + "/speedup.svg"});
  ASSERT_EQ(rendered.exit_status, 0) << rendered.stderr_text;
  const std::string seen = report_checks({"png", png});
  std::cout << "[measure] speedup.svg as PNG: " << seen;
  unsigned width = 0, height = 0, colours = 0;
  double ink = 0;
  ASSERT_EQ(std::sscanf(seen.c_str(), "%ux%u %u %lf", &width, &height, &colours, &ink), 4) << seen;
  EXPECT_EQ(width, 960u);
  EXPECT_EQ(height, 540u);
  EXPECT_GT(colours, 4u) << "three bar colours, text and white";
  EXPECT_GT(ink, 0.03) << seen;
  EXPECT_LT(ink, 0.6) << seen;

  // --json prints report.json itself.
  CliRun as_json = cli({"report", "vm1", "--out", files / "second"}, false, {"--json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  const auto printed = json_of(as_json);
  EXPECT_EQ(printed["bench"], report["bench"]);
  EXPECT_EQ(printed, nlohmann::json::parse(slurp(files / "second/report.json")));
}

TEST_F(Report, ARecipeThatNamesAPublishedRunGetsThePublishedFiguresBesideTheMeasuredOnes) {
  // The stand-in's figures (tests/fixtures/llama-bench): 10.0x / 12.0x at 97.7 % / 75.0 % of
  // host. The published run asks for 16x in generation: the report must say it falls short.
  start_bench_world("host_json: \"" + fixture("host.json") +
                    "\", published: {source: 'a composed run, for this test', command: "
                    "'llama-bench -p 512 -n 128 -r 3 -o json', speedup: {pp: 10x, tg: 16x}, "
                    "host: {pp: 97%, tg: 75%}}");
  CliRun created = create({"--bench"});
  ASSERT_EQ(created.exit_code, 0) << created.err << created.out;
  auto record = provenance::read_provenance(state.path(), "vm1");
  ASSERT_TRUE(record.ok() && record.value().bench);
  EXPECT_EQ((*record.value().bench)["published"]["speedup"],
            (nlohmann::json{{"pp", 10.0}, {"tg", 16.0}}));

  ASSERT_EQ(cli({"report", "vm1", "--out", out_dir()}, false).exit_code, 0);
  expect_schema_valid(out_dir());
  const auto report = nlohmann::json::parse(slurp(out_dir() + "/report.json"));
  const auto& comparison = report["bench"]["published_comparison"];
  EXPECT_EQ(comparison["source"], "a composed run, for this test");
  EXPECT_EQ(comparison["statistic"], "median of samples_ts");
  EXPECT_EQ(comparison["command_matches"], true);
  EXPECT_EQ(comparison["measured_command"], "llama-bench -p 512 -n 128 -r 3 -o json");
  // Per test and figure: the median row, judged, then the avg_ts row, shown.
  ASSERT_EQ(comparison["rows"].size(), 8u) << comparison.dump(2);
  const auto row = [&](std::size_t i) { return comparison["rows"][i]; };
  EXPECT_EQ(row(0)["test"], "pp512");
  EXPECT_EQ(row(0)["figure"], "speedup");
  EXPECT_EQ(row(0)["statistic"], "median of samples_ts");
  EXPECT_EQ(row(0)["measured"], report["bench"]["tests"][0]["median"]["speedup"]);
  EXPECT_EQ(row(0)["published"], 10.0);
  EXPECT_EQ(row(0)["verdict"], "reproduces");
  EXPECT_EQ(row(1)["statistic"], "ratio of avg_ts");
  EXPECT_EQ(row(1)["measured"], report["bench"]["tests"][0]["speedup"]);
  EXPECT_EQ(row(1)["published"], nullptr);
  EXPECT_EQ(row(2)["figure"], "host_ratio");
  EXPECT_EQ(row(2)["verdict"], "reproduces");
  EXPECT_EQ(row(4)["test"], "tg128");
  EXPECT_EQ(row(4)["published"], 16.0);
  EXPECT_EQ(row(4)["verdict"], "below the published figure");
  EXPECT_EQ(row(6)["verdict"], "reproduces");

  const std::string markdown = slurp(out_dir() + "/report.md");
  EXPECT_NE(markdown.find("## Against the published run\n"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| pp512 | speedup | median of samples_ts | 10.00x | 10.00x | "
                          "**reproduces** |\n"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| tg128 | speedup | median of samples_ts | 12.00x | 16.00x | "
                          "**below the published figure** |\n"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| tg128 | unlocked / host | median of samples_ts | 75.00% | 75.00% | "
                          "**reproduces** |\n"),
            std::string::npos)
      << markdown;
  const std::string svg = slurp(out_dir() + "/speedup.svg");
  EXPECT_NE(svg.find(">speedup 12.00x, published 16.00x: below the published figure</text>"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find(">of host 97.71%, published 97.00%: reproduces</text>"), std::string::npos);
  // The chart still renders.
  auto rendered = run_command(
      {"/usr/bin/env", "rsvg-convert", "-o", files / "published.png", out_dir() + "/speedup.svg"});
  EXPECT_EQ(rendered.exit_status, 0) << rendered.stderr_text;

  // A later bench of the same command keeps the published run; the report still compares.
  CliRun again = cli({"bench", "vm1", "--model", model, "--host-json", fixture("host.json")});
  ASSERT_EQ(again.exit_code, 0) << again.err << again.out;
  auto rerecorded = provenance::read_provenance(state.path(), "vm1");
  ASSERT_TRUE(rerecorded.ok() && rerecorded.value().bench);
  EXPECT_EQ((*rerecorded.value().bench)["published"], (*record.value().bench)["published"]);
  // Another command does not reproduce it: the record drops it.
  CliRun other = cli({"bench", "vm1", "--model", model, "-r", "5"});
  ASSERT_EQ(other.exit_code, 0) << other.err << other.out;
  EXPECT_FALSE(
      provenance::read_provenance(state.path(), "vm1").value().bench->contains("published"));
}

TEST_F(Report, CheckMatchesTheVmThenExitsSixNamingAChangedShimOrArtifactFile) {
  start_bench_world("");
  ASSERT_EQ(create({"--bench"}).exit_code, 0);
  // The model the recipe's install: block put into the guest, as the provenance records it.
  const std::string artifact = model;
  auto record = provenance::read_provenance(state.path(), "vm1").value();
  ASSERT_TRUE(record.artifacts.has_value());
  const auto installed = std::find_if(record.artifacts->begin(),
                                      record.artifacts->end(),
                                      [&](const auto& a) { return a.dest == artifact; });
  ASSERT_NE(installed, record.artifacts->end());
  ASSERT_EQ(installed->sha256, util::sha256_hex(slurp(artifact)));

  ASSERT_EQ(cli({"report", "vm1", "--out", out_dir()}, false).exit_code, 0);
  expect_schema_valid(out_dir());
  CliRun same = cli({"report", "--check", out_dir(), "vm1"});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("against VM 'vm1': everything matches\n"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("  ok      artifact file " + artifact + "\n"), std::string::npos)
      << same.out;
  EXPECT_NE(same.out.find("  ok      probe unlocked family 1009\n"), std::string::npos) << same.out;

  const auto report = nlohmann::json::parse(slurp(out_dir() + "/report.json"));
  const std::string shim_file = report["shim"]["files"][0]["path"];
  write_file(shim_file, "not the shim", 0755);
  write_file(artifact, "another model", 0644);
  CliRun changed = cli({"report", "--check", out_dir(), "vm1"});
  EXPECT_EQ(changed.exit_code, 6) << changed.out << changed.err;
  EXPECT_NE(changed.out.find("  DIFFERS shim file " + shim_file + ": report " +
                             report["shim"]["files"][0]["sha256"].get<std::string>() + ", VM " +
                             util::sha256_hex("not the shim") + "\n"),
            std::string::npos)
      << changed.out;
  EXPECT_NE(changed.out.find("  DIFFERS artifact file " + artifact + ": report " +
                             installed->sha256 + ", VM " + util::sha256_hex("another model")),
            std::string::npos)
      << changed.out;
  EXPECT_NE(changed.err.find("warning: VM 'vm1' differs from the report " + out_dir() +
                             ": shim file " + shim_file + ", artifact file " + artifact),
            std::string::npos)
      << changed.err;
}

TEST_F(Report, AReportWithoutABenchSaysSoAndHoldsEverythingElse) {
  start_world();
  ASSERT_EQ(create().exit_code, 0);
  CliRun run = cli({"report", "vm1", "--out", out_dir()}, false);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_NE(run.out.find("  note: no bench run is recorded for VM 'vm1': run 'lume-unlock bench "
                         "vm1 --model PATH' (or create --bench with a recipe's bench: block)\n"),
            std::string::npos)
      << run.out;
  expect_schema_valid(out_dir());
  const auto report = nlohmann::json::parse(slurp(out_dir() + "/report.json"));
  EXPECT_EQ(report["bench"]["ran"], false);
  EXPECT_EQ(report["image"]["digest"], image_digest);
  EXPECT_FALSE(report["shim"]["files"].empty());
  ASSERT_EQ(report["raw_inputs"].size(), 1u);
  EXPECT_EQ(report["raw_inputs"][0]["name"], "provenance.json");
  EXPECT_NE(slurp(out_dir() + "/speedup.svg").find("no bench run"), std::string::npos);
  EXPECT_NE(slurp(out_dir() + "/report.md").find("No bench run: no bench run is recorded"),
            std::string::npos);
  // A folder that is not a report is never overwritten.
  fs::create_directories(files / "precious");
  write_file(files / "precious/notes.txt", "mine", 0644);
  CliRun refused = cli({"report", "vm1", "--out", files / "precious"}, false);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("report folder '" + (files / "precious") +
                             "': it exists and is not a report folder (it has no report.json)"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(slurp(files / "precious/notes.txt"), "mine");
}

} // namespace
} // namespace lume_unlock::test
