// `lume-unlock resolve` and `lume-unlock pull` driven in-process against lume-sim and a real
// registry (docker-registry), with skopeo as the independent check of every digest.
#include "lume/client.hpp"
#include "oci/manifest.hpp"
#include "oci/registry_client.hpp"
#include "provenance/provenance.hpp"
#include "support/cli_run.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/lume_sim.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/http_client.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace lume_unlock {
namespace {

using test::CliRun;

test::CliRun run(const std::vector<std::string>& args) {
  return test::run_lume_unlock(args);
}

namespace fs = std::filesystem;
using nlohmann::json;

const char* const k_skopeo = "/usr/bin/skopeo";

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

class CliPull : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why_not;
    m_registry = test::RegistryServer::start(why_not);
    LUME_UNLOCK_REQUIRE(m_registry != nullptr, why_not);
    LUME_UNLOCK_REQUIRE(access(k_skopeo, X_OK) == 0,
                        "skopeo is not installed (run scripts/bootstrap)");
    m_ref = m_registry->host() + "/trycua/macos-tahoe-cua:latest";
    m_client = oci::RegistryClient(m_registry->client_options());
    setenv("SSL_CERT_FILE", m_registry->ca_file().c_str(), 1);
    auto image = test::seed_lume_image(m_client, oci::parse_reference(m_ref).value());
    ASSERT_TRUE(image.ok()) << image.error().message();
    m_image = image.value();
  }

  void TearDown() override { unsetenv("SSL_CERT_FILE"); }

  void start_sim(std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(), {"--registry-ca", m_registry->ca_file(), "--pull-delay-ms", "300"});
    m_sim = std::make_unique<test::LumeSim>(LUME_SIM_BINARY, extra);
    ASSERT_TRUE(m_sim->started()) << m_sim->failure();
  }

  /// `lume-unlock --lume-url … --state-dir … ARGS`.
  CliRun cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"--lume-url", m_sim->url(), "--state-dir", m_state.path()});
    return run(args);
  }

  /// sha256 of the manifest bytes skopeo reads (plain `skopeo inspect` refuses Lume images).
  std::string skopeo_digest(const std::string& ref) {
    auto r = test::run_command(
        {k_skopeo, "inspect", "--raw", m_registry->skopeo_trust(), "docker://" + ref});
    EXPECT_EQ(r.exit_status, 0) << r.stderr_text;
    return "sha256:" + util::sha256_hex(r.stdout_text);
  }

  std::size_t pull_requests() { return count(m_sim->process().stderr_text(), "POST /lume/pull"); }
  std::string vm_file(const std::string& vm, const std::string& name) {
    return m_sim->home() + "/" + vm + "/" + name;
  }

  std::unique_ptr<test::RegistryServer> m_registry;
  std::string m_ref;
  oci::RegistryClient m_client;
  test::SeededLumeImage m_image;
  std::unique_ptr<test::LumeSim> m_sim;
  test::TempDir m_state{"cli-pull-state"};
};

TEST_F(CliPull, ResolveAndPullPrintAndRecordTheDigestSkopeoReports) {
  start_sim();
  const std::string expected = skopeo_digest(m_ref);
  ASSERT_EQ(expected, m_image.digest.str());

  auto resolved = cli({"resolve", m_ref});
  EXPECT_EQ(resolved.exit_code, 0) << resolved.err;
  EXPECT_EQ(resolved.out, expected + "\n");

  auto pulled = cli({"pull", m_ref, "demo"});
  ASSERT_EQ(pulled.exit_code, 0) << pulled.err;
  EXPECT_EQ(pulled.out, expected + "\n");
  EXPECT_NE(pulled.err.find("pulled " + m_ref + " into VM 'demo'"), std::string::npos)
      << pulled.err;
  EXPECT_EQ(util::read_file(vm_file("demo", ".manifest-digest")).value(), expected);

  auto record = provenance::read_provenance(m_state.path(), "demo");
  ASSERT_TRUE(record.ok()) << record.error().message();
  json doc = provenance::to_json(record.value());
  ASSERT_TRUE(doc.contains("created_at"));
  EXPECT_TRUE(provenance::is_rfc3339(doc["created_at"].get<std::string>()));
  EXPECT_EQ(doc["updated_at"], doc["created_at"]);
  doc.erase("created_at");
  doc.erase("updated_at");
  EXPECT_EQ(
      doc,
      json({{"schema", "lume-unlock/provenance/v1"},
            {"vm", "demo"},
            {"lume_url", m_sim->url()},
            {"image",
             {{"reference", m_ref}, {"digest", expected}, {"lume_manifest_digest", expected}}},
            {"hardware",
             {{"cpu", 4}, {"memory_bytes", 8ull << 30}, {"disk_bytes", m_image.disk.size()}}}}));
}

TEST_F(CliPull, JsonPullIsOneDocumentAndASecondPullChangesNothing) {
  start_sim();
  auto first = cli({"--json", "pull", m_ref, "demo"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string path = m_state / "vms/demo/provenance.json";
  EXPECT_EQ(json::parse(first.out),
            json({{"vm", "demo"},
                  {"reference", m_ref},
                  {"digest", m_image.digest.str()},
                  {"lume_manifest_digest", m_image.digest.str()},
                  {"changed", true},
                  {"provenance", path}}));
  const std::string recorded = util::read_file(path).value();
  EXPECT_EQ(pull_requests(), 1u);

  auto second = cli({"--json", "pull", m_ref, "demo"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(json::parse(second.out)["changed"], false);
  EXPECT_EQ(json::parse(second.out)["digest"], m_image.digest.str());
  EXPECT_EQ(pull_requests(), 1u) << "an existing VM at the same digest must not be pulled again";
  EXPECT_EQ(util::read_file(path).value(), recorded) << "nothing changed, so nothing rewritten";
}

TEST_F(CliPull, PullKeepsWhatAnEarlierRecordSaysAboutTheGuest) {
  start_sim();
  ASSERT_EQ(cli({"pull", m_ref, "demo"}).exit_code, 0);
  auto record = provenance::read_provenance(m_state.path(), "demo").value();
  record.guest = provenance::GuestInfo{"macOS", "26.5.2", "25F84", "arm64"};
  record.created_at = "2026-01-01T00:00:00Z";
  record.image->lume_manifest_digest = "sha256:" + std::string(64, '0'); // stale
  ASSERT_TRUE(provenance::write_provenance(m_state.path(), record).ok());

  auto again = cli({"pull", m_ref, "demo"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto updated = provenance::read_provenance(m_state.path(), "demo").value();
  EXPECT_EQ(updated.guest->version, "26.5.2");
  EXPECT_EQ(updated.created_at, "2026-01-01T00:00:00Z");
  EXPECT_NE(updated.updated_at, "2026-01-01T00:00:00Z");
  EXPECT_EQ(updated.image->lume_manifest_digest, m_image.digest.str());
  EXPECT_EQ(pull_requests(), 1u);
}

TEST_F(CliPull, TagMovedDuringThePullIsExit4AndLeavesTheVm) {
  test::TempDir gate_dir("cli-pull-gate");
  const std::string gate = gate_dir / "go";
  start_sim({"--pull-gate", gate});
  test::LumeImageSpec spec;
  spec.seed = 5;
  auto moved = test::seed_lume_image(
      m_client,
      oci::parse_reference(m_registry->host() + "/trycua/macos-tahoe-cua:next").value(),
      spec);
  ASSERT_TRUE(moved.ok());

  CliRun result;
  std::thread pull([&] { result = cli({"pull", m_ref, "demo"}); });
  // Once Lume reports the pull, lume-unlock has resolved the tag: move it, then let Lume fetch.
  lume::ClientOptions options;
  options.base_url = m_sim->url();
  lume::LumeClient lume(options);
  bool pulling = false;
  for (int i = 0; i < 500 && !pulling; ++i) {
    auto state = lume.find("demo");
    pulling =
        state.ok() && state.value() && std::holds_alternative<lume::PullProgress>(*state.value());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(pulling);
  EXPECT_TRUE(m_client
                  .push_manifest(oci::parse_reference(m_ref).value(),
                                 moved.value().manifest_bytes,
                                 oci::media_type::oci_manifest)
                  .ok());
  std::ofstream(gate) << "";
  pull.join();

  const std::string before = m_image.digest.str();
  const std::string after = moved.value().digest.str();
  ASSERT_EQ(skopeo_digest(m_ref), after);
  EXPECT_EQ(result.exit_code, 4) << result.err;
  EXPECT_NE(result.err.find("lume-unlock: error: pull step 'image': pull of '" + m_ref +
                            "' into VM 'demo': tag moved during pull: resolved " + before +
                            " but Lume pulled " + after + "\n"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.out, "");
  // Nothing deleted: the VM and Lume's record stay for inspection; no provenance claimed.
  EXPECT_EQ(util::read_file(vm_file("demo", ".manifest-digest")).value(), after);
  EXPECT_TRUE(fs::exists(vm_file("demo", "disk.img")));
  EXPECT_FALSE(fs::exists(m_state / "vms/demo/provenance.json"));
}

TEST_F(CliPull, DigestOnlyReferenceNeedsItsSha256Tag) {
  start_sim();
  const std::string by_digest =
      m_registry->host() + "/trycua/macos-tahoe-cua@" + m_image.digest.str();
  const std::string tag = "sha256-" + m_image.digest.hex();

  auto missing = cli({"pull", by_digest, "pinned"});
  EXPECT_EQ(missing.exit_code, 4);
  EXPECT_NE(missing.err.find("the immutable tag '" + m_registry->host() +
                             "/trycua/macos-tahoe-cua:" + tag + "' is not available"),
            std::string::npos)
      << missing.err;
  EXPECT_NE(missing.err.find("hint: Lume pulls only by tag: push the image with the tag '" + tag),
            std::string::npos)
      << missing.err;
  EXPECT_EQ(pull_requests(), 0u);
  EXPECT_FALSE(fs::exists(m_sim->home() + "/pinned"));

  ASSERT_TRUE(
      m_client
          .push_manifest(
              oci::parse_reference(m_registry->host() + "/trycua/macos-tahoe-cua:" + tag).value(),
              m_image.manifest_bytes,
              oci::media_type::oci_manifest)
          .ok());
  auto pulled = cli({"pull", by_digest, "pinned"});
  ASSERT_EQ(pulled.exit_code, 0) << pulled.err;
  EXPECT_EQ(pulled.out,
            skopeo_digest(m_registry->host() + "/trycua/macos-tahoe-cua:" + tag) + "\n");
  EXPECT_NE(m_sim->process().stderr_text().find("trycua/macos-tahoe-cua:" + tag),
            std::string::npos);
  auto record = provenance::read_provenance(m_state.path(), "pinned");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record.value().image->reference, m_registry->host() + "/trycua/macos-tahoe-cua:" + tag);
}

TEST_F(CliPull, LumePullFailureIsExit3WithLumesMessage) {
  start_sim();
  // A leftover directory that Lume does not list as a VM, but refuses to pull over (§3.11).
  fs::create_directories(m_sim->home() + "/demo");
  auto r = cli({"pull", m_ref, "demo"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("Pull failed for 'demo': Virtual machine already exists with name: demo"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("\nhint: Lume keeps answering this for 'demo' until another pull under "
                       "that name starts"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(m_state / "vms/demo/provenance.json"));
}

TEST_F(CliPull, AVmMaskedByAFailedPullIsStillFoundAndDeletedByRemove) {
  start_sim();
  ASSERT_EQ(cli({"pull", m_ref, "demo"}).exit_code, 0);
  // A second pull under the name fails over the existing VM, and from then on Lume answers
  // GET /lume/vms/demo with that failure (lume-api.md §3.3) while the VM stays on disk.
  lume::ClientOptions options;
  options.base_url = m_sim->url();
  lume::LumeClient lume(options);
  const std::string repository = m_registry->host();
  lume::PullRequest again{"macos-tahoe-cua:latest", "demo", repository, "trycua", std::nullopt};
  ASSERT_TRUE(lume.pull_start(again).ok());
  for (int i = 0; i < 100 && lume.get(lume::VmRef{"demo"}).ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto masked = lume.get(lume::VmRef{"demo"});
  ASSERT_FALSE(masked.ok());
  ASSERT_NE(masked.error().why().find("Pull failed for 'demo'"), std::string::npos)
      << masked.error().message();

  // Without --delete-vm the stopped VM's guest cannot be cleaned: the same answer as unmasked.
  auto kept = cli({"remove", "demo"});
  EXPECT_EQ(kept.exit_code, 3) << kept.err;
  EXPECT_NE(kept.err.find("the VM is stopped: its guest cannot be cleaned"), std::string::npos)
      << kept.err;

  auto removed = cli({"remove", "demo", "--delete-vm"});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_FALSE(fs::exists(m_sim->home() + "/demo"));
  EXPECT_FALSE(fs::exists(m_state / "vms/demo/provenance.json"));

  // The name is usable again: a new pull under it clears Lume's failure record.
  auto pulled = cli({"pull", m_ref, "demo"});
  ASSERT_EQ(pulled.exit_code, 0) << pulled.err;
  EXPECT_TRUE(lume.get(lume::VmRef{"demo"}).ok());
}

TEST_F(CliPull, DryRunResolvesAndReportsButChangesNothing) {
  start_sim();
  auto fresh = cli({"pull", "--dry-run", m_ref, "demo"});
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  const std::string digest = m_image.digest.str();
  const std::string step = "pull " + m_ref + " (" + digest +
                           ") into VM 'demo' through Lume and check its .manifest-digest";
  EXPECT_EQ(fresh.out,
            "pull of '" + m_ref + "' into VM 'demo' would run (dry run, nothing changed):\n" +
                "  [to do]    image: " + step + " (VM 'demo' does not exist)\n");
  EXPECT_EQ(pull_requests(), 0u);
  EXPECT_FALSE(fs::exists(m_sim->home() + "/demo"));
  EXPECT_FALSE(fs::exists(m_state / "vms"));

  ASSERT_EQ(cli({"pull", m_ref, "demo"}).exit_code, 0);
  // The same shape as every other plan's dry run, with what was resolved and found beside it.
  auto again = cli({"--json", "pull", "--dry-run", m_ref, "demo"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json::parse(again.out),
            json({{"plan", "pull"},
                  {"steps",
                   json::array({{{"id", "image"},
                                 {"description", step},
                                 {"in_place", true},
                                 {"observed", "VM 'demo' already holds " + digest}}})},
                  {"no_op", true},
                  {"dry_run", true},
                  {"reference", m_ref},
                  {"pull", m_ref},
                  {"digest", digest},
                  {"vm", "demo"},
                  {"vm_exists", true},
                  {"vm_manifest_digest", digest}}));
  EXPECT_EQ(pull_requests(), 1u);
}

TEST_F(CliPull, BadNamesAndReferencesAreUsageErrors) {
  start_sim();
  EXPECT_EQ(cli({"pull", m_ref, "a/b"}).exit_code, 2);
  EXPECT_EQ(cli({"pull", "UPPER/Case", "demo"}).exit_code, 2);
  EXPECT_EQ(pull_requests(), 0u);
}

/// lume-api.md §3.18 / Settings.swift: a location added and made Lume's default, through
/// Lume's own routes.
void move_default_location(const std::string& lume_url, const std::string& path) {
  util::HttpClient http;
  util::HttpRequest add{"POST", lume_url + "/lume/config/locations"};
  add.headers.push_back({"Content-Type", "application/json"});
  add.body = json({{"name", "ssd"}, {"path", path}}).dump();
  auto added = http.send(add);
  ASSERT_TRUE(added.ok() && added.value().status == 200);
  auto made_default = http.send({"POST", lume_url + "/lume/config/locations/default/ssd"});
  ASSERT_TRUE(made_default.ok() && made_default.value().status == 200);
}

// Settings.swift / VMDirectory.swift: Lume keeps a pulled VM (and its .manifest-digest) in its
// default location, whatever LUME_HOME says; the digest check asks Lume where that is.
TEST_F(CliPull, AMovedDefaultLocationStillGivesACorrectDigestCheck) {
  start_sim();
  test::TempDir ssd("cli-pull-ssd");
  move_default_location(m_sim->url(), ssd.path());
  test::TempDir elsewhere("cli-pull-lume-home");
  setenv("LUME_HOME", elsewhere.path().c_str(), 1); // not Lume's setting: must not matter
  auto first = cli({"--json", "pull", m_ref, "demo"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(json::parse(first.out)["lume_manifest_digest"], m_image.digest.str());
  EXPECT_EQ(util::read_file(ssd / "demo/.manifest-digest").value(), m_image.digest.str());
  EXPECT_FALSE(fs::exists(vm_file("demo", "config.json")));

  // The second pull finds the VM at the same digest in the moved location: nothing to do.
  auto second = cli({"--json", "pull", m_ref, "demo"});
  unsetenv("LUME_HOME");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(json::parse(second.out)["changed"], false);
  EXPECT_EQ(pull_requests(), 1u);
}

// ImageContainerRegistry.swift builds every registry URL as https://; Lume has no insecure mode.
TEST_F(CliPull, APlainHttpRegistryIsRefusedBeforeLumeIsAsked) {
  start_sim();
  std::string why_not;
  auto plain = test::RegistryServer::start(why_not, test::RegistryServer::Transport::plain_http);
  ASSERT_NE(plain, nullptr) << why_not;
  const std::string ref = plain->host() + "/trycua/macos-tahoe-cua:latest";
  oci::RegistryClient insecure(plain->client_options());
  ASSERT_TRUE(test::seed_lume_image(insecure, oci::parse_reference(ref).value()).ok());

  auto r = cli({"pull", ref, "demo", "--insecure-registry", plain->host()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("Lume pulls and pushes only over https, and http://" + plain->host() +
                       " is a plain-HTTP (--insecure-registry) registry"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(pull_requests(), 0u);
}

// RegistryFactory.createRegistry: a pull naming ghcr.io/trycua goes to config.yaml's registry.
TEST_F(CliPull, LumesConfiguredRegistryOverrideIsRefusedNamingTheSetting) {
  start_sim({"--registry", m_registry->host(), "--registry-organization", "acme"});
  auto r = cli({"pull", "ghcr.io/trycua/macos-tahoe-cua:latest", "demo"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("Lume replaces ghcr.io/trycua with the registry in its config.yaml "
                       "(registry.ghcr.registry: " +
                       m_registry->host() + ", registry.ghcr.organization: acme)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(pull_requests(), 0u);
}

} // namespace
} // namespace lume_unlock
