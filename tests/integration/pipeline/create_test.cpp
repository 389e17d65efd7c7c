// lume-unlock create / status / verify / remove end to end against lume-sim, guest-sim and a
// real docker-registry (see pipeline_fixture.hpp).
#include "pipeline_fixture.hpp"
#include "provenance/provenance.hpp"
#include "transfer/shim_bundle.hpp"
#include "util/sha256.hpp"

#include <chrono>

namespace lume_unlock::test {
namespace {

using Create = PipelineWorld;

std::vector<std::string> step_outcomes(const nlohmann::json& doc) {
  std::vector<std::string> outcomes;
  for (const auto& step : doc["steps"]) {
    outcomes.push_back(step["id"].get<std::string>() + "=" + step["outcome"].get<std::string>());
  }
  return outcomes;
}

TEST_F(Create, FullCreateInstallsVerifiesEnablesAndRecords) {
  start_world();
  const auto started = std::chrono::steady_clock::now();
  CliRun run = create();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const auto doc = json_of(run);
  ASSERT_TRUE(doc.is_object()) << run.out;
  std::cout << "[measure] full create: " << seconds << " s, SSH commands "
            << doc["counts"]["ssh_commands"] << ", Lume requests " << doc["counts"]["lume_requests"]
            << "\n";
  EXPECT_EQ(doc["image"]["digest"], image_digest);
  EXPECT_EQ(doc["shim"]["platform"], "linux-x86_64");
  EXPECT_EQ(doc["shim"]["bundle_source"], "--bundle");
  // Every installed file carries the SHA-256 bundle.json names, and is in the guest with it.
  auto bundle = bundle::load_bundle_directory(SHIM_BUNDLE_DIR).value();
  const auto& entry = bundle.manifest().platforms.at("linux-x86_64");
  std::set<std::string> bundle_hashes = {entry.shim.sha256, entry.probe->sha256};
  for (const auto& f : entry.support) {
    bundle_hashes.insert(f.sha256);
  }
  // shim, probe, and libMetalEmu.so twice: beside the shim and beside the probe ($ORIGIN).
  ASSERT_EQ(doc["shim"]["files"].size(), 4u);
  for (const auto& file : doc["shim"]["files"]) {
    EXPECT_EQ(bundle_hashes.count(file["sha256"].get<std::string>()), 1u) << file;
    EXPECT_EQ(util::sha256_file_hex(file["path"].get<std::string>()).value(), file["sha256"]);
  }
  EXPECT_EQ(doc["probe"]["changed_families"], (nlohmann::json{"1006", "1007", "1008", "1009"}));
  EXPECT_EQ(doc["probe"]["stock"]["max_threadgroup_memory"], 32768);
  EXPECT_EQ(doc["probe"]["unlocked"]["max_threadgroup_memory"], 65536);
  EXPECT_TRUE(guest_has(plist_path()));
  EXPECT_TRUE(guest_has(support_dir() + "/enabled-executables"));
  EXPECT_TRUE(guest_has(support_dir() + "/provenance.json"));
  // The host record has the DESIGN §7 keys and matches the guest's.
  auto host = util::read_file(state.path() + "/vms/vm1/provenance.json").value();
  auto guest_record = util::read_file(support_dir() + "/provenance.json").value();
  EXPECT_EQ(host, guest_record);
  auto record = nlohmann::json::parse(host);
  for (const char* key : {"schema",
                          "vm",
                          "lume_url",
                          "image",
                          "hardware",
                          "guest",
                          "shim",
                          "enablement",
                          "probe",
                          "recipe",
                          "created_at",
                          "updated_at"}) {
    EXPECT_TRUE(record.contains(key)) << key;
  }
  EXPECT_EQ(record["image"]["digest"], image_digest);
  EXPECT_EQ(record["hardware"]["cpu"], 2);
  EXPECT_EQ(record["hardware"]["memory_bytes"], 4ULL << 30);
  EXPECT_EQ(record["enablement"][0]["plist_sha256"], util::sha256_file_hex(plist_path()).value());
  EXPECT_EQ(leftovers(), "");
}

TEST_F(Create, SecondCreateChangesNothingInFewerThanTenSshCommands) {
  start_world();
  ASSERT_EQ(create().exit_code, 0);
  const std::string record_before =
      util::read_file(state.path() + "/vms/vm1/provenance.json").value();
  const auto started = std::chrono::steady_clock::now();
  CliRun again = create();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto doc = json_of(again);
  std::cout << "[measure] no-op create: " << seconds << " s, SSH commands "
            << doc["counts"]["ssh_commands"] << ", Lume requests " << doc["counts"]["lume_requests"]
            << "\n";
  EXPECT_EQ(doc["changed"], 0) << again.out;
  for (const auto& outcome : step_outcomes(doc)) {
    EXPECT_NE(outcome.find("=unchanged"), std::string::npos) << outcome;
  }
  EXPECT_LT(doc["counts"]["ssh_commands"].get<int>(), 10);
  EXPECT_EQ(util::read_file(state.path() + "/vms/vm1/provenance.json").value(), record_before);
  // Human form says so.
  CliRun human = cli({"create", "vm1", "--recipe", recipe, "--bundle", SHIM_BUNDLE_DIR});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_EQ(human.out.rfind("create 'vm1': no changes\n", 0), 0u) << human.out;
}

TEST_F(Create, CreateKeepsAllowEntriesAndSaysSoUntilExclusiveRemovesThem) {
  start_world();
  ASSERT_EQ(create().exit_code, 0);
  CliRun added = cli({"allow", "add", "vm1", "extra", "--program", probe_path(), "--no-agent"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_EQ(cli({"status", "vm1"}).exit_code, 0) << "an allow edit is part of the record";

  CliRun kept = create();
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  const auto doc = json_of(kept);
  EXPECT_EQ(doc["allow_entries"]["kept"], nlohmann::json::array({"extra"})) << kept.out;
  EXPECT_EQ(doc["allow_entries"]["removed"], nlohmann::json::array()) << kept.out;
  EXPECT_EQ(cli({"status", "vm1"}).exit_code, 0);

  CliRun plan = cli({"create",
                     "vm1",
                     "--recipe",
                     recipe,
                     "--bundle",
                     SHIM_BUNDLE_DIR,
                     "--exclusive",
                     "--dry-run"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("--exclusive: remove the entries added with allow: 'extra'"),
            std::string::npos)
      << plan.out;

  CliRun exclusive = create({"--exclusive"});
  ASSERT_EQ(exclusive.exit_code, 0) << exclusive.err;
  EXPECT_EQ(json_of(exclusive)["allow_entries"]["removed"], nlohmann::json::array({"extra"}));
  CliRun listed = cli({"allow", "list", "vm1"}, true, {"--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::vector<std::string> names;
  const nlohmann::json document = json_of(listed); // outlives the loop (no dangling temporary)
  for (const auto& entry : document["enablement"]) {
    names.push_back(entry["name"].get<std::string>());
  }
  EXPECT_EQ(names, std::vector<std::string>{"probe-agent"}) << listed.out;
  EXPECT_EQ(cli({"status", "vm1"}).exit_code, 0);
}

TEST_F(Create, StatusIsCleanThenNamesATamperedFile) {
  start_world();
  ASSERT_EQ(create().exit_code, 0);
  CliRun clean = cli({"status", "vm1"});
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  EXPECT_EQ(clean.out.rfind("status of 'vm1': everything matches the record\n", 0), 0u)
      << clean.out;
  // Tamper with the installed shim in guest-sim's home.
  const std::string shim = shim_dir() + "/liblume-unlock-shim.so";
  std::string bytes = util::read_file(shim).value();
  bytes.push_back('\0');
  ASSERT_TRUE(util::write_file_atomic(shim, bytes, 0755).ok());
  CliRun drift = cli({"status", "vm1"}, true, {"--json"});
  EXPECT_EQ(drift.exit_code, 6) << drift.out << drift.err;
  const auto doc = json_of(drift);
  EXPECT_EQ(doc["drift"], true);
  EXPECT_EQ(
      doc["record"],
      nlohmann::json::parse(util::read_file(state.path() + "/vms/vm1/provenance.json").value()))
      << "status --json carries the record it compared the guest with";
  std::vector<std::string> drifted;
  for (const auto& item : doc["items"]) {
    if (!item["ok"].get<bool>()) {
      drifted.push_back(item["item"].get<std::string>());
    }
  }
  EXPECT_EQ(drifted, std::vector<std::string>{"shim file " + shim});
  EXPECT_NE(drift.err.find("drift in VM 'vm1': shim file " + shim), std::string::npos) << drift.err;
}

TEST_F(Create, StatusReportsAMissingAgentPlist) {
  start_world();
  ASSERT_EQ(create().exit_code, 0);
  ASSERT_EQ(::unlink(plist_path().c_str()), 0);
  CliRun drift = cli({"status", "vm1"});
  EXPECT_EQ(drift.exit_code, 6);
  EXPECT_NE(drift.out.find("DRIFT  agent 'probe-agent' plist: expected "), std::string::npos)
      << drift.out;
}

TEST_F(Create, VerifyPassesAndAcceptsAFastLlamaLog) {
  start_world();
  ASSERT_EQ(create().exit_code, 0);
  CliRun ok = cli({"verify", "vm1"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_EQ(ok.out.rfind("verify 'vm1': ok\n", 0), 0u) << ok.out;
  CliRun fast =
      cli({"verify",
           "vm1",
           "--llama-log",
           std::string(LUME_UNLOCK_FIXTURES) + "/llama-logs/unlocked-lume-unlock-shim.stderr"});
  EXPECT_EQ(fast.exit_code, 0) << fast.out << fast.err;
  CliRun stock = cli({"verify",
                      "vm1",
                      "--llama-log",
                      std::string(LUME_UNLOCK_FIXTURES) + "/llama-logs/stock-guest.stderr"},
                     true,
                     {"--json"});
  EXPECT_EQ(stock.exit_code, 6) << stock.out;
  EXPECT_EQ(json_of(stock)["ok"], false);
  // Metal's own failure line fails verify, named with its fix; the shim's success line where
  // llama-server hid the capability block passes.
  const std::string broken_log =
      std::string(LUME_UNLOCK_FIXTURES) + "/llama-logs/broken-residency-set.stderr";
  CliRun broken = cli({"verify", "vm1", "--llama-log", broken_log});
  EXPECT_EQ(broken.exit_code, 6) << broken.out;
  EXPECT_NE(broken.out.find("  problem: the llama.cpp log '" + broken_log +
                            "' is 'broken': line 19 'ggml_metal_buffer_map: error: failed to "
                            "initialize residency set' in llama-server: Metal could not make a "
                            "residency set on this device; set env: {GGML_METAL_NO_RESIDENCY: "
                            "\"1\"} on the enablement entry that runs llama-server\n"),
            std::string::npos)
      << broken.out;
  CliRun enabled =
      cli({"verify",
           "vm1",
           "--llama-log",
           std::string(LUME_UNLOCK_FIXTURES) + "/llama-logs/server-shim-enabled.stderr"});
  EXPECT_EQ(enabled.exit_code, 0) << enabled.out << enabled.err;
  EXPECT_NE(enabled.out.find("  llama.cpp log: shim-enabled\n"), std::string::npos) << enabled.out;
}

TEST_F(Create, RemoveLeavesTheGuestStockAndKeepsARecord) {
  start_world();
  ASSERT_EQ(create().exit_code, 0);
  ASSERT_TRUE(guest_has(plist_path()));
  CliRun dry = cli({"remove", "vm1", "--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_TRUE(guest_has(plist_path()));
  EXPECT_TRUE(guest_has(state.path() + "/vms/vm1/provenance.json"));
  CliRun removed = cli({"remove", "vm1"}, true, {"--json"});
  ASSERT_EQ(removed.exit_code, 0) << removed.out << removed.err;
  EXPECT_EQ(json_of(removed)["removed_agents"], nlohmann::json{"dev.lume-unlock.probe-agent"});
  EXPECT_FALSE(guest_has(plist_path()));
  EXPECT_FALSE(guest_has(support_dir()));
  EXPECT_FALSE(guest_has(support_dir() + "/enabled-executables"));
  EXPECT_FALSE(guest_has(state.path() + "/vms/vm1/provenance.json"));
  const std::string record = json_of(removed)["removal_record"].get<std::string>();
  EXPECT_EQ(record.rfind(state.path() + "/vms/vm1/removed-", 0), 0u) << record;
  EXPECT_TRUE(guest_has(record));
  // launchd no longer has the agent.
  auto print = run_command({"/bin/sh",
                            "-c",
                            "PATH=\"$1/bin:$PATH\" launchctl print gui/$(id -u \"$2\")",
                            "sh",
                            guest.dir(),
                            guest.info().user});
  EXPECT_EQ(print.stdout_text.find("dev.lume-unlock.probe-agent"), std::string::npos)
      << print.stdout_text;
  // And create brings it all back.
  CliRun again = create();
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(guest_has(plist_path()));
}

TEST_F(Create, RemoveWithDeleteVmDeletesItThroughLume) {
  start_world();
  ASSERT_EQ(create().exit_code, 0);
  CliRun removed = cli({"remove", "vm1", "--delete-vm"});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_FALSE(guest_has(lume->home() + "/vm1"));
}

TEST_F(Create, LockedRecipeIsPulledByItsPinnedDigest) {
  start_world();
  // No sha256-<hex> tag, as on an upstream image: the pull goes through the recipe's own tag,
  // which still names the locked digest (DESIGN §8: resolve, pull, compare .manifest-digest).
  oci::RegistryClient client(registry->client_options());
  auto manifest = client.get_manifest(image_ref);
  ASSERT_TRUE(manifest.ok());
  CliRun lock = cli({"lock", recipe}, false);
  ASSERT_EQ(lock.exit_code, 0) << lock.err;
  CliRun run = create();
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto doc = json_of(run);
  EXPECT_EQ(doc["locked"], true);
  EXPECT_EQ(doc["reference"], image_ref.pinned(manifest.value().digest).str());
  EXPECT_EQ(doc["image"]["digest"], image_digest);
}

// A registry that speaks plain HTTP where lume-unlock asks TLS (no --insecure-registry): OpenSSL
// reads its HTTP answer as a bad TLS record. The error says what the registry is, as a setup to
// change (exit 2), not a certificate that failed (exit 4).
TEST_F(Create, APlainHttpRegistryIsNamedForWhatItIsBeforeLumeIsAsked) {
  start_world();
  std::string why_not;
  auto plain = RegistryServer::start(why_not, RegistryServer::Transport::plain_http);
  ASSERT_NE(plain, nullptr) << why_not;
  std::string yaml = slurp(recipe);
  yaml.replace(yaml.find(image_ref.str()),
               image_ref.str().size(),
               plain->host() + "/trycua/macos-tahoe-cua:latest");
  write_file(recipe, yaml, 0644);
  CliRun run = create();
  EXPECT_EQ(run.exit_code, 2) << run.err << run.out;
  run.err += run.out; // --json: the error document is on stdout
  EXPECT_NE(
      run.err.find(plain->host() + " speaks plain HTTP; Lume reaches registries over HTTPS only"),
      std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("http.tls.certificate"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("certificate did not verify"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(state.path() + "/vms/vm1/provenance.json"))
      << "nothing was created";
}

TEST_F(Create, RefusesWhenLumeRunsTheMaximumOfVms) {
  start_world(
      {"--fault",
       R"(GET /lume/host/status=200:{"status":"healthy","vm_count":2,"max_vms":2,"available_slots":0,"version":"1.0.0"})"});
  CliRun run = create();
  EXPECT_EQ(run.exit_code, 3) << run.out;
  EXPECT_EQ(json_of(run)["error"]["message"],
            "create 'vm1': Lume already runs 2 of at most 2 macOS VMs");
  EXPECT_FALSE(guest_has(lume->home() + "/vm1"));
}

TEST_F(Create, RefusesAVmThatIsNotOursWithAnotherImage) {
  start_world();
  CliRun pulled = cli({"pull", image_ref.str(), "vm1"}, false);
  ASSERT_EQ(pulled.exit_code, 0) << pulled.err;
  // Not ours any more (no record), and the tag now names another image.
  ASSERT_EQ(::unlink((state.path() + "/vms/vm1/provenance.json").c_str()), 0);
  oci::RegistryClient client(registry->client_options());
  LumeImageSpec spec;
  spec.seed = 9;
  ASSERT_TRUE(seed_lume_image(client, image_ref, spec).ok());
  CliRun run = create();
  EXPECT_EQ(run.exit_code, 2) << run.out;
  const std::string message = json_of(run)["error"]["message"].get<std::string>();
  EXPECT_EQ(message.rfind("create 'vm1': a VM of that name exists and was not created by "
                          "lume-unlock (it holds " +
                              image_digest,
                          0),
            0u)
      << message;
}

TEST_F(Create, ARecipeBundlePinnedInARegistryIsFetchedInstalledAndRecorded) {
  start_world();
  // Publish the build tree's archive as `lume-unlock bundle push` does, and pin it in the recipe.
  oci::RegistryClient client(registry->client_options());
  const auto tagged = oci::parse_reference(registry->host() + "/acme/lume-unlock-shim:build");
  auto published = transfer::publish_bundle(client, SHIM_BUNDLE_ARCHIVE, tagged.value());
  ASSERT_TRUE(published.ok()) << published.error().message();
  const std::string digest = published.value().digest.str();
  const std::string pinned = tagged.value().repository_path() + "@" + digest;
  std::string text = util::read_file(recipe).value();
  text.replace(
      text.find("shim:\n"), 6, "shim:\n  bundle: " + tagged.value().str() + "@" + digest + "\n");
  ASSERT_TRUE(util::write_file_atomic(recipe, text, 0644).ok());

  const std::vector<std::string> command = {"create", "vm1", "--recipe", recipe, "--ssh-wait", "2"};
  CliRun run = cli(command, true, {"--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const auto doc = json_of(run);
  EXPECT_EQ(doc["shim"]["bundle_source"], "recipe shim.bundle");
  EXPECT_EQ(doc["shim"]["bundle_reference"], pinned);
  // What landed in the guest is the build tree's bundle, byte for byte.
  auto bundle = bundle::load_bundle_directory(SHIM_BUNDLE_DIR).value();
  const auto& entry = bundle.manifest().platforms.at("linux-x86_64");
  EXPECT_EQ(util::sha256_file_hex(shim_dir() + "/liblume-unlock-shim.so").value(),
            entry.shim.sha256);
  EXPECT_EQ(util::sha256_file_hex(probe_path()).value(), entry.probe->sha256);
  EXPECT_EQ(doc["probe"]["changed_families"], (nlohmann::json{"1006", "1007", "1008", "1009"}));

  // The record says which artifact the shim came from, on the host and in the guest.
  const std::string host = util::read_file(state.path() + "/vms/vm1/provenance.json").value();
  EXPECT_EQ(host, util::read_file(support_dir() + "/provenance.json").value());
  const auto record = nlohmann::json::parse(host);
  EXPECT_EQ(record["shim"]["bundle_reference"], pinned);
  EXPECT_EQ(record["shim"]["bundle_digest"], digest);
  EXPECT_EQ(record["shim"]["bundle_version"], published.value().version);

  // Same recipe again: nothing changes. The human summary names the artifact.
  CliRun again = cli(command);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out.rfind("create 'vm1': no changes\n", 0), 0u) << again.out;
  EXPECT_NE(again.out.find("bundle from recipe shim.bundle " + pinned + "):"), std::string::npos)
      << again.out;

  // The same bundle from the build tree: the files stay, the record forgets the registry.
  CliRun local = create();
  ASSERT_EQ(local.exit_code, 0) << local.err;
  const auto local_record =
      nlohmann::json::parse(util::read_file(state.path() + "/vms/vm1/provenance.json").value());
  EXPECT_FALSE(local_record["shim"].contains("bundle_reference")) << local_record["shim"];
  EXPECT_FALSE(local_record["shim"].contains("bundle_digest"));
  EXPECT_EQ(local_record["shim"]["files"], record["shim"]["files"]);
}

TEST_F(Create, DryRunChangesNothing) {
  start_world();
  const std::string before =
      run_command({"/usr/bin/find", lume->home(), guest.info().home}).stdout_text;
  CliRun dry = cli({"create", "vm1", "--recipe", recipe, "--bundle", SHIM_BUNDLE_DIR, "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("[to do]    resize: set 2 vCPU, 4GB while stopped"), std::string::npos)
      << dry.out;
  CliRun json = cli({"create", "vm1", "--recipe", recipe, "--bundle", SHIM_BUNDLE_DIR, "--dry-run"},
                    true,
                    {"--json"});
  ASSERT_EQ(json.exit_code, 0);
  EXPECT_EQ(json_of(json)["steps"].size(), 10u);
  EXPECT_EQ(run_command({"/usr/bin/find", lume->home(), guest.info().home}).stdout_text, before);
  EXPECT_FALSE(guest_has(state.path() + "/vms/vm1/provenance.json"));
  EXPECT_FALSE(guest_has(state.path() + "/vms/vm1/known_host")); // no SSH contact at all
}

} // namespace
} // namespace lume_unlock::test
