// `lume-unlock bench` end to end: the real linux-x86_64 shim-bundle entry installed into
// guest-sim, the llama-bench stand-in (tests/sim/llama-bench) enabled with `allow add`, and the
// figures it replays chosen by what the emulated Metal device answers through the shim.
#include "integration/apply/cli_fixture.hpp"
#include "provenance/provenance.hpp"
#include "support/evidence.hpp"
#include "support/file_io.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace lume_unlock::cli {
namespace {

namespace fs = std::filesystem;
using test::slurp;

class BenchEndToEnd : public test::CliGuestTest {
protected:
  /// Installs the shim, puts the stand-in (with libMetalEmu.so and the replay files `stock`
  /// and `unlocked`) and a model file into the guest, and enables it as entry "llama-bench",
  /// and the llama-perplexity stand-in as entry "llama-perplexity" with `perplexity_env`
  /// (KEY=VALUE, e.g. its drift control) when given.
  void prepare(const std::string& stock,
               const std::string& unlocked,
               const std::string& perplexity_env = "") {
    auto loaded = bundle::load_bundle_directory(LUME_UNLOCK_SHIM_BUNDLE_DIR);
    LUME_UNLOCK_REQUIRE(loaded.ok(),
                        "no shim bundle at " LUME_UNLOCK_SHIM_BUNDLE_DIR ": " +
                            (loaded.ok() ? std::string() : loaded.error().message()));
    facts = install(loaded.value());
    const fs::path bin = facts.home + "/llama.cpp/bin";
    fs::create_directories(bin / "llama-bench-replay");
    const fs::path built = LLAMA_BENCH_SIM_BINARY;
    fs::copy_file(built, bin / "llama-bench");
    fs::copy_file(built.parent_path() / "libMetalEmu.so", bin / "libMetalEmu.so");
    test::write_file(bin / "llama-bench-replay/stock.json", slurp(stock));
    test::write_file(bin / "llama-bench-replay/unlocked.json", slurp(unlocked));
    program = (bin / "llama-bench").string();
    fs::create_directories(facts.home + "/models");
    model = facts.home + "/models/composed 1B.gguf";
    test::write_file(model, "GGUF not really a model");
    auto added = run({"allow", "add", "vm1", "llama-bench", "--program", program, "--no-agent"});
    ASSERT_EQ(added.exit_code, 0) << added.err;
    fs::copy_file(LLAMA_PERPLEXITY_SIM_BINARY, bin / "llama-perplexity");
    std::vector<std::string> perplexity = {"allow",
                                           "add",
                                           "vm1",
                                           "llama-perplexity",
                                           "--program",
                                           (bin / "llama-perplexity").string(),
                                           "--no-agent"};
    if (!perplexity_env.empty()) {
      perplexity.insert(perplexity.end(), {"--env", perplexity_env});
    }
    added = run(perplexity);
    ASSERT_EQ(added.exit_code, 0) << added.err;
  }

  std::string support() const { return facts.home + "/Library/Application Support/LumeUnlock"; }

  static std::string fixture(const std::string& name) {
    return std::string(LUME_UNLOCK_FIXTURES_DIR) + "/llama-bench/" + name;
  }

  guest::GuestFacts facts;
  std::string program;
  std::string model;
};

TEST_F(BenchEndToEnd, TheActiveShimGivesTheUnlockedFiguresAndTheyAreRecorded) {
  prepare(fixture("guest-stock.json"), fixture("guest-unlocked.json"));
  auto r = run({"bench", "vm1", "--model", model, "--min-speedup", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "llama-bench in VM 'vm1', composed 1B Q4_0, llama.cpp 0badc0de1\n"
            "test      stock t/s   unlocked t/s  speedup\n"
            "pp512  80.12 ± 1.50  801.25 ± 3.75   10.00x\n"
            "tg128   4.50 ± 0.25   54.00 ± 0.50   12.00x\n"
            "perplexity 11.827 vs 11.826 on CPU\n"
            "unlocked run's Metal log: fast (stock run: stock)\n"
            "llama-bench ran with -v: without it, it sends ggml's later messages (Metal's "
            "failure lines among them) to a null logger\n");
  EXPECT_NE(r.err.find("bench"), std::string::npos) << "no progress shown: " << r.err;
  EXPECT_NE(r.err.find("perplexity unlocked run"), std::string::npos) << r.err;
  // -v reached llama-bench: ggml's messages after the capability block are in the kept log.
  const std::string kept = slurp(state.path() + "/vms/vm1/bench/unlocked.stderr");
  EXPECT_NE(kept.find("ggml_metal_init: picking default device: Apple Paravirtual device"),
            std::string::npos)
      << kept;
  // Without -v the stand-in, like llama-bench, prints the block and nothing of ggml after it.
  auto quiet = run({"exec", "vm1", "llama-bench"}, {"--", "-m", model, "-o", "json"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_NE(quiet.err.find("ggml_metal_device_init: GPU name:"), std::string::npos) << quiet.err;
  EXPECT_EQ(quiet.err.find("ggml_metal_init:"), std::string::npos) << quiet.err;

  // Recorded on the host and in the guest, the same object.
  auto host = provenance::read_provenance(state.path(), "vm1");
  ASSERT_TRUE(host.ok()) << host.error().message();
  ASSERT_TRUE(host.value().bench.has_value());
  const nlohmann::json& bench = *host.value().bench;
  EXPECT_EQ(bench["tests"][0]["speedup"], 10.0);
  EXPECT_EQ(bench["tests"][1]["speedup"], 12.0);
  EXPECT_EQ(bench["build_commit"], "0badc0de1");
  EXPECT_EQ(bench["model_type"], "composed 1B Q4_0");
  EXPECT_EQ(bench["gpu"], "Apple Paravirtual device");
  EXPECT_EQ(bench["log"], nlohmann::json({{"stock", "stock"}, {"unlocked", "fast"}}));
  EXPECT_EQ(bench["passed"], true);
  EXPECT_EQ(bench["thresholds"], nlohmann::json({{"min_speedup", 5.0}}));
  EXPECT_EQ(bench["model"], model);
  // Correct as well as fast: the GPU's perplexity within rounding of the CPU's, as printed.
  const auto& perplexity = bench["perplexity"];
  EXPECT_EQ(perplexity["stock"]["estimate"], 11.8262);
  EXPECT_EQ(perplexity["unlocked"]["estimate"], 11.8274);
  EXPECT_EQ(perplexity["stock"]["chunks"].size(), 5u);
  EXPECT_EQ(perplexity["max_drift"], 0.02);
  EXPECT_LT(perplexity["drift"].get<double>(), 0.001);
  EXPECT_EQ(perplexity["context"], 512);
  EXPECT_TRUE(bench["raw"].contains("perplexity-unlocked.stderr")) << bench["raw"];
  // The text the runs read is the shipped one, in the guest.
  EXPECT_EQ(slurp(support() + "/bench/perplexity-text.txt").size(), 13341u);
  auto guest = provenance::parse_provenance(slurp(support() + "/provenance.json"));
  ASSERT_TRUE(guest.ok()) << guest.error().message();
  EXPECT_EQ(guest.value().bench, host.value().bench);

  auto status = run({"status", "vm1"});
  EXPECT_NE(status.out.find("  last bench: pp512 10.00x, tg128 12.00x, perplexity 11.827 vs "
                            "11.826 on CPU (log fast, gate passed, "),
            std::string::npos)
      << status.out << status.err;

  // The host's figures: share of host, and a threshold on it that tg128 misses.
  auto hosted = run({"bench",
                     "vm1",
                     "--model",
                     model,
                     "--host-json",
                     fixture("host.json"),
                     "--min-host-ratio",
                     "pp=0.95,tg=0.80",
                     "--json"});
  EXPECT_EQ(hosted.exit_code, 6) << hosted.err;
  auto document = nlohmann::json::parse(hosted.out);
  EXPECT_EQ(document["host_chip"], "Apple M2 Max");
  EXPECT_EQ(document["tests"][1]["host_ratio"], 0.75);
  EXPECT_EQ(document["passed"], false);
  EXPECT_EQ(document["failures"],
            nlohmann::json({"tg128: 75.0% of host is below --min-host-ratio tg=0.8"}));
  EXPECT_NE(hosted.err.find("lume-unlock: bench failed: tg128: 75.0% of host is below "
                            "--min-host-ratio tg=0.8"),
            std::string::npos)
      << hosted.err;
}

TEST_F(BenchEndToEnd, WithTheProgramOffTheGuardFileTheShimStaysInertAndTheGateFails) {
  prepare(fixture("guest-stock.json"), fixture("guest-unlocked.json"));
  // The entry stays on the list and keeps its environment, but the shim's guard file no longer
  // names the program: the shim loads, stays inert, and llama.cpp sees the stock device.
  const std::string guard = support() + "/enabled-executables";
  const std::string listed = slurp(guard);
  ASSERT_NE(listed.find(program), std::string::npos) << listed;
  test::write_file(guard, "", 0644);

  auto r = run({"bench", "vm1", "--model", model, "--min-speedup", "5"});
  EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
  EXPECT_NE(r.out.find("pp512  80.12 ± 1.50  80.12 ± 1.50    1.00x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unlocked run's Metal log: shim-inactive"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("lume-unlock: bench failed: pp512: speedup 1.00x is below --min-speedup 5"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("lume-unlock: bench failed: the shim was inactive in the unlocked run"),
            std::string::npos)
      << r.err;
  auto host = provenance::read_provenance(state.path(), "vm1");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ((*host.value().bench)["passed"], false);
  EXPECT_EQ((*host.value().bench)["log"]["unlocked"], "shim-inactive");
}

TEST_F(BenchEndToEnd, AGpuWhosePerplexityDriftsFailsTheBenchWithBothNumbers) {
  // The stand-in's test control: the GPU run's perplexity 1.05 times the CPU's.
  prepare(fixture("guest-stock.json"),
          fixture("guest-unlocked.json"),
          "LLAMA_PERPLEXITY_SIM_GPU_DRIFT=0.05");
  auto r = run({"bench", "vm1", "--model", model, "--min-speedup", "5"});
  EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
  EXPECT_NE(r.out.find("perplexity 12.419 vs 11.826 on CPU"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("lume-unlock: bench failed: unlocked perplexity 12.4188 is not the stock "
                       "(CPU) run's 11.8262: it drifted 5.01% (--max-perplexity-drift 2.00%, "
                       "relative)"),
            std::string::npos)
      << r.err;
  auto bench = *provenance::read_provenance(state.path(), "vm1").value_or_throw().bench;
  EXPECT_EQ(bench["passed"], false);
  EXPECT_EQ(bench["perplexity"]["unlocked"]["estimate"], 12.4188);

  // The limit is the user's: a looser one passes the same runs.
  auto loose = run({"bench", "vm1", "--model", model, "--max-perplexity-drift", "6%"});
  EXPECT_EQ(loose.exit_code, 0) << loose.err;
}

TEST_F(BenchEndToEnd, MetalFailureLinesInTheGpuPerplexityRunFailTheBench) {
  // The stand-in's test control: the GPU run reports a failed command buffer, then its figures.
  prepare(fixture("guest-stock.json"),
          fixture("guest-unlocked.json"),
          "LLAMA_PERPLEXITY_SIM_GPU_METAL_ERROR=1");
  auto r = run({"bench", "vm1", "--model", model, "--min-speedup", "5"});
  EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
  EXPECT_NE(r.out.find("perplexity 11.827 vs 11.826 on CPU"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("lume-unlock: bench failed: the llama-perplexity unlocked run's Metal log "
                       "is broken: line "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("'ggml_metal_synchronize: error: command buffer 0 failed with status 5'"),
            std::string::npos)
      << r.err;
}

TEST_F(BenchEndToEnd, AGpuRunWithoutAFinalEstimateFailsTheBench) {
  // NaN from the GPU, as broken kernels give: chunk values "nan", no Final estimate.
  prepare(fixture("guest-stock.json"),
          fixture("guest-unlocked.json"),
          "LLAMA_PERPLEXITY_SIM_GPU_DRIFT=nan");
  auto r = run({"bench", "vm1", "--model", model});
  EXPECT_EQ(r.exit_code, 6) << r.out << r.err;
  EXPECT_NE(r.out.find("perplexity: no figure"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("lume-unlock: bench failed: the unlocked llama-perplexity run printed no "
                       "'Final estimate' line"),
            std::string::npos)
      << r.err;
  auto bench = *provenance::read_provenance(state.path(), "vm1").value_or_throw().bench;
  EXPECT_FALSE(bench["perplexity"]["unlocked"].contains("estimate")) << bench["perplexity"];
  EXPECT_EQ(bench["perplexity"]["stock"]["estimate"], 11.8262);
}

TEST_F(BenchEndToEnd, AHostPerplexityIsComparedTheSameWay) {
  prepare(fixture("guest-stock.json"), fixture("guest-unlocked.json"));
  const std::string host = state.path() + "/host-perplexity.txt";
  test::write_file(host,
                   "perplexity: calculating perplexity over 5 chunks, n_ctx=512, batch_size=512, "
                   "n_seq=1\n[1]11.8000,[2]11.8100,\nFinal estimate: PPL = 11.8300 +/- 0.40000\n");
  auto r = run({"bench", "vm1", "--model", model, "--host-perplexity", host, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto document = nlohmann::json::parse(r.out);
  EXPECT_EQ(document["perplexity"]["host"]["estimate"], 11.83);
  EXPECT_LT(document["perplexity"]["host_drift"].get<double>(), 0.001);
  EXPECT_TRUE(document["raw"].contains("host-perplexity.txt"));

  test::write_file(host, "[1]11.8000,[2]11.8100,\nFinal estimate: PPL = 14.0000 +/- 0.4\n");
  auto far = run({"bench", "vm1", "--model", model, "--host-perplexity", host});
  EXPECT_EQ(far.exit_code, 6);
  EXPECT_NE(far.err.find("unlocked perplexity 11.8274 is not the host's 14.0000"),
            std::string::npos)
      << far.err;

  test::write_file(host, "[1]11.8000,\n");
  auto none = run({"bench", "vm1", "--model", model, "--host-perplexity", host});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("it has no 'Final estimate: PPL = …' line"), std::string::npos)
      << none.err;
}

TEST_F(BenchEndToEnd, BadRequestsAreRefusedBeforeAnythingRuns) {
  prepare(fixture("guest-stock.json"), fixture("guest-unlocked.json"));
  auto missing = run({"bench", "vm1", "--model", facts.home + "/models/none.gguf"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("is not a readable file in the guest"), std::string::npos)
      << missing.err;
  auto entry = run({"bench", "vm1", "--model", model, "--entry", "llama-bnech"});
  EXPECT_EQ(entry.exit_code, 2);
  EXPECT_NE(entry.err.find("hint: did you mean 'llama-bench'? (--entry NAME)"), std::string::npos)
      << entry.err;
  auto perplexity = run({"bench", "vm1", "--model", model, "--perplexity-entry", "perplexity"});
  EXPECT_EQ(perplexity.exit_code, 2);
  EXPECT_NE(perplexity.err.find("entry 'perplexity' is not on its enablement list"),
            std::string::npos)
      << perplexity.err;
  auto drift = run({"bench", "vm1", "--model", model, "--max-perplexity-drift", "0"});
  EXPECT_EQ(drift.exit_code, 2);
  EXPECT_NE(drift.err.find("'0' is not a relative drift in (0, 1]"), std::string::npos)
      << drift.err;
  auto ratio = run({"bench", "vm1", "--model", model, "--min-host-ratio", "0.9"});
  EXPECT_EQ(ratio.exit_code, 2);
  EXPECT_NE(ratio.err.find("'0.9' is not one of pp=R, tg=R or pg=R"), std::string::npos)
      << ratio.err;
  auto host_run = run({"bench", "vm1", "--model", model, "--host-run"});
  EXPECT_EQ(host_run.exit_code, 2);
  EXPECT_NE(host_run.err.find("this is not macOS"), std::string::npos) << host_run.err;
  const std::string truncated = state.path() + "/host-truncated.json";
  test::write_file(truncated, slurp(fixture("host.json")).substr(0, 100));
  auto bad_host = run({"bench", "vm1", "--model", model, "--host-json", truncated});
  EXPECT_EQ(bad_host.exit_code, 2);
  EXPECT_NE(bad_host.err.find("it ends early, after 100 bytes: the JSON is truncated"),
            std::string::npos)
      << bad_host.err;
  EXPECT_FALSE(provenance::read_provenance(state.path(), "vm1").value_or_throw().bench);
}

// The issue's end-to-end figures, from the published outputs (skipped without ../shared):
// TinyLlama 11.1x/17.1x and Gemma 4 12B 7.20x/14.48x at 99.6 %/94.9 % of host.
TEST_F(BenchEndToEnd, PublishedOutputsReplayToThePublishedRatios) {
  const auto stock = test::find_evidence("gemma4-stock-10x.json");
  const auto shim = test::find_evidence("gemma4-safe-shim-10x.json");
  const auto host = test::find_evidence("gemma4-host-10x.json");
  const auto tiny_stock = test::find_evidence("tiny-stock-minimal.json");
  const auto tiny_shim = test::find_evidence("tiny-safe-shim-10x-final.json");
  if (!stock || !shim || !host || !tiny_stock || !tiny_shim) {
    GTEST_SKIP() << "the published llama-bench outputs are not on this machine (looked under "
                 << test::evidence_places() << ")";
  }
  prepare(*stock, *shim);
  auto gemma = run({"bench", "vm1", "--model", model, "--host-json", *host, "--min-speedup", "5"});
  ASSERT_EQ(gemma.exit_code, 0) << gemma.out << gemma.err;
  EXPECT_NE(gemma.out.find("7.20x    517.73    99.6%"), std::string::npos) << gemma.out;
  EXPECT_NE(gemma.out.find("14.48x     52.35    94.9%"), std::string::npos) << gemma.out;
  EXPECT_NE(gemma.out.find("host Apple M1 Ultra"), std::string::npos) << gemma.out;

  const std::string replay = facts.home + "/llama.cpp/bin/llama-bench-replay/";
  test::write_file(replay + "stock.json", slurp(*tiny_stock));
  test::write_file(replay + "unlocked.json", slurp(*tiny_shim));
  auto tiny = run({"bench", "vm1", "--model", model, "--min-speedup", "5", "--json"});
  ASSERT_EQ(tiny.exit_code, 0) << tiny.err;
  auto document = nlohmann::json::parse(tiny.out);
  EXPECT_NEAR(document["tests"][0]["speedup"].get<double>(), 11.1, 0.005);
  EXPECT_NEAR(document["tests"][1]["speedup"].get<double>(), 17.08, 0.005);
}

} // namespace
} // namespace lume_unlock::cli
