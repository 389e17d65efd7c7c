// lume-unlock create / status / verify / remove end to end against lume-sim, guest-sim and a
// real docker-registry (see pipeline_fixture.hpp).
#include "pipeline_fixture.hpp"

#include "provenance/provenance.hpp"
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
  const auto doc = run.json();
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
  ASSERT_EQ(doc["shim"]["files"].size(), 3u);
  for (const auto& file : doc["shim"]["files"]) {
    EXPECT_EQ(bundle_hashes.count(file["sha256"].get<std::string>()), 1u) << file;
    EXPECT_EQ(util::sha256_file_hex(file["path"].get<std::string>()).value(), file["sha256"]);
  }
  EXPECT_EQ(doc["probe"]["changed_families"],
            (nlohmann::json{"1006", "1007", "1008", "1009"}));
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
  for (const char* key : {"schema", "vm", "lume_url", "image", "hardware", "guest", "shim",
                          "enablement", "probe", "recipe", "created_at", "updated_at"}) {
    EXPECT_TRUE(record.contains(key)) << key;
  }
  EXPECT_EQ(record["image"]["digest"], image_digest);
  EXPECT_EQ(record["hardware"]["cpu"], 2);
  EXPECT_EQ(record["hardware"]["memory_bytes"], 4ULL << 30);
  EXPECT_EQ(record["enablement"][0]["plist_sha256"],
            util::sha256_file_hex(plist_path()).value());
  EXPECT_EQ(leftovers(), "");
}

TEST_F(Create, SecondCreateChangesNothingInFewerThanTenSshCommands) {
  start_world();
  ASSERT_EQ(create().exit_code, 0);
  const std::string record_before = util::read_file(state.path() + "/vms/vm1/provenance.json").value();
  const auto started = std::chrono::steady_clock::now();
  CliRun again = create();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto doc = again.json();
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

} // namespace
} // namespace lume_unlock::test
