// create --bench and bake --bench end to end: a recipe with a bench: block, the llama-bench
// stand-in (tests/sim/llama-bench) beside the real shim in guest-sim, lume-sim and a real
// docker-registry on TLS; the annotated manifest read back with skopeo.
#include "bench_world.hpp"
#include "provenance/provenance.hpp"
#include "recipe/recipe.hpp"
#include "support/file_io.hpp"
#include "util/sha256.hpp"

#include <chrono>
#include <filesystem>
#include <regex>

namespace lume_unlock::test {
namespace {

namespace fs = std::filesystem;

TEST_F(BenchPipeline, CreateBenchRunsLastRecordsTheFiguresOnHostAndGuestAndStatusShowsThem) {
  start_bench_world("min_speedup: 5");
  // The plan shows the bench as the last step.
  CliRun planned = create({"--bench", "--dry-run"});
  ASSERT_EQ(planned.exit_code, 0) << planned.err << planned.out;
  const auto plan = json_of(planned);
  ASSERT_TRUE(plan.contains("steps")) << planned.out;
  EXPECT_EQ(plan["steps"].back()["id"], "bench");
  EXPECT_NE(plan["steps"].back()["description"].get<std::string>().find(
                "-p 512 -n 128 -r 3, gate min_speedup 5"),
            std::string::npos)
      << plan.dump(2);
  EXPECT_EQ(step_of(json_of(create({"--dry-run"})), "bench"), nullptr) << "bench without --bench";

  const auto started = std::chrono::steady_clock::now();
  CliRun run = create({"--bench"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const auto doc = json_of(run);
  const nlohmann::json* bench_step = step_of(doc, "bench");
  ASSERT_NE(bench_step, nullptr) << run.out;
  EXPECT_EQ((*bench_step)["outcome"], "changed") << bench_step->dump();
  std::cout << "[measure] create --bench: " << seconds << " s, of which the bench step "
            << (*bench_step)["seconds"] << " s\n";
  ASSERT_TRUE(doc.contains("bench")) << run.out;
  EXPECT_EQ(doc["bench"]["tests"][0]["speedup"], 10.0);
  EXPECT_EQ(doc["bench"]["tests"][1]["speedup"], 12.0);
  EXPECT_EQ(doc["bench"]["passed"], true);
  EXPECT_EQ(doc["bench"]["thresholds"], nlohmann::json({{"min_speedup", 5.0}}));

  // Host and guest records hold the same figures.
  auto host = provenance::read_provenance(state.path(), "vm1");
  ASSERT_TRUE(host.ok()) << host.error().message();
  ASSERT_TRUE(host.value().bench.has_value());
  EXPECT_EQ((*host.value().bench)["model"], model);
  EXPECT_EQ((*host.value().bench)["model_type"], "composed 1B Q4_0");
  EXPECT_EQ((*host.value().bench)["build_commit"], "0badc0de1");
  EXPECT_EQ((*host.value().bench)["log"]["unlocked"], "fast");
  auto in_guest = provenance::parse_provenance(slurp(support_dir() + "/provenance.json"));
  ASSERT_TRUE(in_guest.ok()) << in_guest.error().message();
  EXPECT_EQ(in_guest.value().bench, host.value().bench);

  CliRun status = cli({"status", "vm1"});
  EXPECT_NE(status.out.find("  last bench: pp512 10.00x, tg128 12.00x, perplexity 11.827 vs "
                            "11.826 on CPU (log fast, gate passed, "),
            std::string::npos)
      << status.out << status.err;
  // Correct as well as fast: the recipe's llama-perplexity entry ran on the CPU and the GPU.
  EXPECT_EQ(doc["bench"]["perplexity"]["stock"]["estimate"], 11.8262);
  EXPECT_EQ(doc["bench"]["perplexity"]["unlocked"]["estimate"], 11.8274);

  // A create without --bench changes nothing, and keeps the figures.
  CliRun again = create();
  ASSERT_EQ(again.exit_code, 0) << again.err << again.out;
  EXPECT_EQ(json_of(again)["changed"], 0) << again.out;
  EXPECT_EQ(provenance::read_provenance(state.path(), "vm1").value().bench, host.value().bench);
}

TEST_F(BenchPipeline, AGateThatCannotBeMetExitsSixNamingTheFigureAndLeavesTheVm) {
  start_bench_world("min_speedup: 1000, min_host_ratio: {tg: 0.8}, host_json: \"" +
                    fixture("host.json") + "\"");
  CliRun run = create({"--bench"});
  EXPECT_EQ(run.exit_code, 6) << run.err << run.out;
  const std::string error = json_of(run)["error"].dump();
  EXPECT_NE(error.find("create step 'bench': bench of VM 'vm1'"), std::string::npos) << error;
  EXPECT_NE(error.find("pp512: speedup 10.00x is below bench.min_speedup 1000"), std::string::npos)
      << error;
  EXPECT_NE(error.find("tg128: speedup 12.00x is below bench.min_speedup 1000"), std::string::npos)
      << error;
  EXPECT_NE(error.find("tg128: 75.0% of host is below bench.min_host_ratio tg=0.8"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("the VM 'vm1' was created and left in place"), std::string::npos) << error;
  // The VM is there and provisioned; the failed figures are recorded.
  CliRun status = cli({"status", "vm1"});
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_NE(status.out.find("97.7% of host, tg128 12.00x 75.0% of host, perplexity 11.827 vs "
                            "11.826 on CPU (log fast, gate FAILED"),
            std::string::npos)
      << status.out;
  auto host = provenance::read_provenance(state.path(), "vm1");
  ASSERT_TRUE(host.ok() && host.value().bench);
  EXPECT_EQ((*host.value().bench)["passed"], false);
  EXPECT_EQ((*host.value().bench)["host_source"], "recipe bench.host_json " + fixture("host.json"));
}

TEST_F(BenchPipeline, AGpuWhosePerplexityDriftsFailsCreateBenchWithBothNumbers) {
  // The stand-in's test control, set on the recipe's llama-perplexity entry: the GPU's
  // perplexity 1.5 times the CPU's, far above the recipe's 1% limit.
  start_world();
  prepare_llama_cpp_release();
  write_bench_recipe("max_perplexity_drift: 1%", "{LLAMA_PERPLEXITY_SIM_GPU_DRIFT: \"0.5\"}");
  CliRun run = create({"--bench"});
  EXPECT_EQ(run.exit_code, 6) << run.err << run.out;
  const std::string error = json_of(run)["error"].dump();
  EXPECT_NE(error.find("unlocked perplexity 17.7411 is not the stock (CPU) run's 11.8262: it "
                       "drifted 50.02% (bench.max_perplexity_drift 1.00%, relative)"),
            std::string::npos)
      << error;
  auto host = provenance::read_provenance(state.path(), "vm1");
  ASSERT_TRUE(host.ok() && host.value().bench);
  EXPECT_EQ((*host.value().bench)["passed"], false);
  EXPECT_EQ((*host.value().bench)["perplexity"]["max_drift"], 0.01);
}

TEST_F(BenchPipeline, BenchWithoutABenchBlockIsAUsageError) {
  start_world();
  CliRun run = create({"--bench"});
  EXPECT_EQ(run.exit_code, 2) << run.err << run.out;
  const auto doc = json_of(run);
  EXPECT_EQ(doc["error"]["message"], "--bench: the recipe '" + recipe + "' has no bench: block")
      << run.out;
  EXPECT_NE(doc["error"]["hint"].get<std::string>().find("bench: {model: "), std::string::npos)
      << run.out;
  EXPECT_FALSE(guest_has(state.path() + "/vms/vm1/provenance.json"));
}

TEST_F(BenchPipeline, BakeBenchAnnotatesThePushedManifestAndRecordsTheAnnotatedDigest) {
  guest_home_in_images = true;
  start_bench_world("min_speedup: 5");
  CliRun planned =
      cli({"bake", recipe, "--push", target(), "--bundle", SHIM_BUNDLE_DIR, "--bench", "--dry-run"},
          true,
          {"--json"});
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  std::vector<std::string> ids;
  const auto plan = json_of(planned);
  for (const auto& s : plan["steps"]) {
    ids.push_back(s["id"]);
  }
  const std::vector<std::string> tail = {
      "provenance", "bench", "stop", "push", "annotate", "record"};
  ASSERT_GE(ids.size(), tail.size()) << planned.out;
  EXPECT_EQ(std::vector<std::string>(ids.end() - tail.size(), ids.end()), tail);

  CliRun generated = cli({"key", "generate", files / "signing"}, false);
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  CliRun run = bake_with_bench({"--sign-key", files / "signing.key"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const auto doc = json_of(run);
  const std::string digest = doc["digest"];
  const nlohmann::json* annotate = step_of(doc, "annotate");
  ASSERT_NE(annotate, nullptr) << run.out;
  std::cout << "[measure] bake --bench: bench step " << (*step_of(doc, "bench"))["seconds"]
            << " s, annotate step " << (*annotate)["seconds"] << " s\n";

  // skopeo, not our client: the tag's manifest carries the figures, and its sha256 is the
  // digest bake printed, locked and tagged.
  const std::string raw = skopeo_raw(target());
  ASSERT_FALSE(raw.empty());
  EXPECT_EQ("sha256:" + util::sha256_hex(raw), digest);
  const auto manifest = nlohmann::json::parse(raw);
  const auto& annotations = manifest["annotations"];
  EXPECT_EQ(annotations["dev.lume-unlock.bench.pp512.speedup"], "10.00") << raw;
  EXPECT_EQ(annotations["dev.lume-unlock.bench.tg128.speedup"], "12.00") << raw;
  EXPECT_EQ(annotations["dev.lume-unlock.bench.pp512.unlocked_ts"], "801.25") << raw;
  EXPECT_EQ(annotations["dev.lume-unlock.bench.model_type"], "composed 1B Q4_0") << raw;
  EXPECT_EQ(annotations["dev.lume-unlock.bench.build_commit"], "0badc0de1") << raw;
  EXPECT_EQ(annotations["dev.lume-unlock.bench.passed"], "true") << raw;
  EXPECT_EQ(annotations["dev.lume-unlock.bench.perplexity.stock"], "11.8262") << raw;
  EXPECT_EQ(annotations["dev.lume-unlock.bench.perplexity.unlocked"], "11.8274") << raw;
  EXPECT_TRUE(annotations.contains("org.trycua.lume.upload-time")) << "Lume's own kept: " << raw;
  for (const auto& [key, value] : annotations.items()) {
    EXPECT_TRUE(value.is_string()) << key << " (Lume reads [String:String])";
  }
  EXPECT_EQ(skopeo_digest(target("sha256-" + digest.substr(7))), digest);
  EXPECT_EQ(doc["immutable_tag"], "sha256-" + digest.substr(7));
  auto lock = recipe::parse_lock_file(util::read_file(recipe::lock_path_for(recipe)).value(),
                                      recipe::lock_path_for(recipe));
  ASSERT_TRUE(lock.ok()) << lock.error().message();
  ASSERT_EQ(lock.value().baked.size(), 1u);
  EXPECT_EQ(lock.value().baked[0].digest, digest);
  // The baked VM's report lies beside the lock file, with the figures of its bench.
  const std::string report_dir = recipe.substr(0, recipe.rfind('.')) + ".report";
  EXPECT_EQ(doc["report"], report_dir) << run.out;
  const auto report = nlohmann::json::parse(slurp(report_dir + "/report.json"));
  EXPECT_EQ(report["vm"], "vm1");
  const auto baked = provenance::read_provenance(state.path(), "vm1");
  ASSERT_TRUE(baked.ok() && baked.value().bench);
  EXPECT_EQ(report["bench"]["tests"], (*baked.value().bench)["tests"]) << report["bench"].dump();
  EXPECT_EQ(report["bench"]["tests"][0]["speedup"], 10.0);
  EXPECT_TRUE(fs::exists(report_dir + "/speedup.svg"));
  // The signature is of the annotated digest, under its cosign tag.
  ASSERT_TRUE(doc.contains("signature")) << run.out;
  EXPECT_EQ(doc["signature"]["reference"], target("sha256-" + digest.substr(7) + ".sig"));
  EXPECT_FALSE(skopeo_raw(target("sha256-" + digest.substr(7) + ".sig")).empty());
  EXPECT_EQ(lock.value().baked[0].signed_by, doc["signature"]["key"].get<std::string>());

  // Lume's own manifest: the same config and layers, and no tag names it.
  std::smatch found;
  const std::string summary = (*annotate)["summary"];
  ASSERT_TRUE(std::regex_search(summary, found, std::regex("Lume's (sha256:[0-9a-f]{64})")))
      << summary;
  const std::string lume_digest = found[1];
  EXPECT_NE(lume_digest, digest);
  const std::string lume_raw = skopeo_raw(registry->host() + "/acme/tahoe-llm@" + lume_digest);
  ASSERT_FALSE(lume_raw.empty());
  const auto lume_manifest = nlohmann::json::parse(lume_raw);
  EXPECT_EQ(lume_manifest["config"], manifest["config"]);
  EXPECT_EQ(lume_manifest["layers"], manifest["layers"]);
  EXPECT_FALSE(lume_manifest["annotations"].contains("dev.lume-unlock.bench.pp512.speedup"));
  EXPECT_TRUE(skopeo_raw(target("sha256-" + lume_digest.substr(7))).empty());

  // lume-sim (held to Lume's pull) pulls the annotated image, and the guest's record it
  // brings carries the figures.
  write_file(support_dir() + "/provenance.json", "{}", 0644);
  CliRun pulled =
      cli({"pull", doc["pinned"], "vm2", "--verify", "--ssh-wait", "2"}, true, {"--json"});
  ASSERT_EQ(pulled.exit_code, 0) << pulled.err << pulled.out;
  EXPECT_EQ(json_of(pulled)["digest"], digest);
  auto in_guest = provenance::parse_provenance(slurp(support_dir() + "/provenance.json"));
  ASSERT_TRUE(in_guest.ok()) << in_guest.error().message();
  ASSERT_TRUE(in_guest.value().bench.has_value());
  EXPECT_EQ((*in_guest.value().bench)["tests"][0]["speedup"], 10.0);
  CliRun status = cli({"status", "vm2"});
  EXPECT_NE(status.out.find("  last bench: pp512 10.00x, tg128 12.00x"), std::string::npos)
      << status.out << status.err;
}

TEST_F(BenchPipeline, BakeWithAFailedGatePushesNothing) {
  guest_home_in_images = true;
  start_bench_world("min_speedup: 1000");
  CliRun run = bake_with_bench();
  EXPECT_EQ(run.exit_code, 6) << run.err << run.out;
  const auto error = json_of(run)["error"];
  EXPECT_NE(error.dump().find("pp512: speedup 10.00x is below bench.min_speedup 1000"),
            std::string::npos)
      << run.out;
  EXPECT_NE(error["hint"].get<std::string>().find("was created and left in place"),
            std::string::npos)
      << run.out;
  EXPECT_NE(error["hint"].get<std::string>().find("; nothing was pushed"), std::string::npos)
      << run.out;
  EXPECT_TRUE(skopeo_raw(target()).empty()) << "pushed despite the gate";
  EXPECT_FALSE(guest_has(recipe::lock_path_for(recipe)));
}

} // namespace
} // namespace lume_unlock::test
