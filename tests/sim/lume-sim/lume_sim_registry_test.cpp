// lume-sim's pulls and pushes against a real registry (Debian's docker-registry on loopback),
// driven with raw HTTP and checked with skopeo, held to reference/lume-oci.md and
// reference/lume-api.md §3.11-§3.13.
#include "lume_sim_registry_fixture.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

namespace {

using ::testing::HasSubstr;

using lume_sim_test::raw;
using lume_unlock::test::LumeSim;
using lume_unlock::test::RegistryServer;
using lume_unlock::test::slurp;
using lume_unlock::test::write_file;
using nlohmann::json;
namespace fs = std::filesystem;
namespace oci = lume_unlock::oci;

using lume_sim_test::LumeSimRegistryTest;

TEST_F(LumeSimRegistryTest, AsyncPullWritesTheVmAndTheManifestDigestFromTheRegistry) {
  auto image = seed("macos-tahoe-cua:latest");
  START(sim, {"--pull-delay-ms", "600"});
  const std::string body = R"({"image":"macos-tahoe-cua:latest","name":"demo","registry":")" +
                           m_registry->host() + R"(","organization":"trycua"})";
  auto r = raw(sim->port(), "POST", "/lume/pull/start", body);
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(r.json_body(), json::parse(R"({"message":"Pull started","name":"demo",
      "image":"macos-tahoe-cua:latest"})"));
  std::vector<double> progress;
  auto done = await_pull(sim->port(), "demo", &progress);
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(done.json_body()["status"], "stopped");
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.front(), 0);
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  EXPECT_GT(progress.back(), 0) << "downloadProgress never rose";

  const fs::path vm = fs::path(sim->home()) / "demo";
  // Exactly the registry's digest, no newline; an independent client agrees.
  EXPECT_EQ(slurp(vm / ".manifest-digest"), skopeo_digest("trycua/macos-tahoe-cua:latest"));
  EXPECT_EQ(slurp(vm / ".manifest-digest"), image.digest.str());
  EXPECT_EQ(slurp(vm / "disk.img"), image.disk);
  EXPECT_EQ(slurp(vm / "nvram.bin"), image.nvram);
  json config = json::parse(slurp(vm / "config.json"));
  EXPECT_EQ(config["os"], "macOS");
  EXPECT_EQ(config["cpuCount"], 4);
  EXPECT_EQ(config["memorySize"], 8ull << 30);
  EXPECT_EQ(config["diskSize"], image.disk.size());
  EXPECT_EQ(config["display"], "1024x768");
  EXPECT_EQ(config["networkMode"], "nat");
  EXPECT_EQ(config["hardwareModel"], "aGFyZHdhcmUtbW9kZWw=");
  EXPECT_EQ(config["machineIdentifier"], "bWFjaGluZS1pZA==");
  EXPECT_TRUE(config["macAddress"].is_string());
  EXPECT_EQ(done.json_body()["diskSize"]["total"], image.disk.size());
}

TEST_F(LumeSimRegistryTest, DefaultRegistryIsTheConfiguredOneAndSyncPullAnswers200) {
  auto image = seed("macos-tahoe-cua:v2", 3);
  START(sim);
  auto r = raw(sim->port(), "POST", "/lume/pull", R"({"image":"macos-tahoe-cua:v2","name":"d2"})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json_body(), json::parse(R"({"message":"Image pulled successfully",
      "image":"macos-tahoe-cua:v2","name":"d2"})"));
  EXPECT_EQ(slurp(fs::path(sim->home()) / "d2" / ".manifest-digest"), image.digest.str());
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/vms/d2").json_body()["status"], "stopped");
}

TEST_F(LumeSimRegistryTest, PullIntoAnExistingNameFailsStickyAndMasksTheVm) {
  seed("macos-tahoe-cua:latest");
  START(sim);
  const std::string body = R"({"image":"macos-tahoe-cua:latest","name":"demo","registry":")" +
                           m_registry->host() + R"("})";
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/pull", body).status, 200);
  auto again = raw(sim->port(), "POST", "/lume/pull", body);
  EXPECT_EQ(again.status, 400);
  EXPECT_EQ(again.body, R"({"message":"Virtual machine already exists with name: demo"})");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(
        raw(sim->port(), "GET", "/lume/vms/demo").body,
        R"({"message":"Pull failed for 'demo': Virtual machine already exists with name: demo"})");
  }
  // Async: accepted, then the same sticky failure.
  EXPECT_EQ(raw(sim->port(), "POST", "/lume/pull/start", body).status, 202);
  auto failed = await_pull(sim->port(), "demo");
  EXPECT_EQ(
      failed.body,
      R"({"message":"Pull failed for 'demo': Virtual machine already exists with name: demo"})");
}

TEST_F(LumeSimRegistryTest, MissingTagsDigestsAndUnreachableRegistriesFailLikeLume) {
  auto image = seed("macos-tahoe-cua:latest");
  START(sim);
  const std::string reg = m_registry->host();
  struct Case {
    const char* name;
    std::string body;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"unknown tag",
       R"({"image":"macos-tahoe-cua:nope","name":"a","registry":")" + reg + R"("})",
       "Failed to fetch image manifest from registry."},
      {"unknown organization",
       R"({"image":"macos-tahoe-cua:latest","name":"b","organization":"other","registry":")" + reg +
           R"("})",
       "Failed to fetch image manifest from registry."},
      // repo@sha256:<hex> splits into name "repo@sha256" and tag "<hex>" (§1.2).
      {"digest reference",
       R"({"image":"macos-tahoe-cua@)" + image.digest.str() + R"(","name":"c","registry":")" + reg +
           R"("})",
       "Failed to fetch image manifest from registry."},
      {"remote registry",
       R"({"image":"macos-tahoe-cua:latest","name":"e","registry":"example.com"})",
       "Failed to fetch image manifest from registry."},
      {"tag and digest", R"({"image":"m:latest@sha256:00","name":"f"})", "Invalid image format"},
  };
  for (const auto& c : cases) {
    auto r = raw(sim->port(), "POST", "/lume/pull", c.body);
    EXPECT_EQ(r.status, 400) << c.name;
    EXPECT_EQ(r.json_body()["message"], c.message) << c.name;
  }
  for (const char* vm : {"a", "b", "c", "e", "f"}) {
    EXPECT_FALSE(fs::exists(fs::path(sim->home()) / vm)) << vm;
  }
}

TEST_F(LumeSimRegistryTest, PullGateHoldsThePullBeforeTheManifestIsFetched) {
  seed("macos-tahoe-cua:latest", 1);
  const auto moved = seed("macos-tahoe-cua:next", 2);
  lume_unlock::test::TempDir dir("lume-sim-gate");
  const std::string gate = dir / "go";
  START(sim, {"--pull-gate", gate, "--pull-delay-ms", "0"});
  const std::string body = R"({"image":"macos-tahoe-cua:latest","name":"demo","registry":")" +
                           m_registry->host() + R"("})";
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/pull/start", body).status, 202);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/vms/demo").json_body()["status"], "pulling");
  // Move the tag: :next's manifest bytes PUT under :latest (setup, with our client).
  oci::RegistryClient client(m_registry->client_options());
  ASSERT_TRUE(
      client
          .push_manifest(
              oci::parse_reference(m_registry->host() + "/trycua/macos-tahoe-cua:latest").value(),
              moved.manifest_bytes,
              "application/vnd.oci.image.manifest.v1+json")
          .ok());
  std::ofstream(gate) << "";
  auto done = await_pull(sim->port(), "demo");
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(slurp(fs::path(sim->home()) / "demo" / ".manifest-digest"), moved.digest.str());
}

TEST_F(LumeSimRegistryTest, PushUploadsALumeImageUnderEveryTagWithANewDigestEachTime) {
  auto image = seed("macos-tahoe-cua:latest");
  START(sim);
  const std::string reg = m_registry->host();
  ASSERT_EQ(raw(sim->port(),
                "POST",
                "/lume/pull",
                R"({"image":"macos-tahoe-cua:latest","name":"demo","registry":")" + reg + R"("})")
                .status,
            200);
  const std::string push = R"({"name":"demo","imageName":"tahoe-unlocked","tags":["1","latest"],
      "registry":")" + reg +
                           R"(","organization":"acme","chunkSizeMb":1})";
  auto r = raw(sim->port(), "POST", "/lume/vms/push", push);
  EXPECT_EQ(r.status, 202);
  const std::string first = await_manifest("acme/tahoe-unlocked:latest");
  EXPECT_EQ(skopeo_raw("acme/tahoe-unlocked:1"), first);
  json m = json::parse(first);
  EXPECT_EQ(m["mediaType"], "application/vnd.oci.image.manifest.v1+json");
  EXPECT_EQ(m["config"]["mediaType"], "application/vnd.trycua.lume.config.v1+json");
  EXPECT_EQ(m["layers"][0]["mediaType"], "application/vnd.trycua.lume.nvram.v1");
  ASSERT_EQ(m["layers"].size(), 1u + 4u); // nvram + ceil((3 MiB + 4321) / 1 MiB) disk parts
  EXPECT_EQ(m["layers"][4]["annotations"]["org.trycua.lume.part.offset"], "3145728");
  EXPECT_EQ(m["layers"][4]["annotations"]["org.trycua.lume.part.total"], "4");
  EXPECT_TRUE(m["annotations"].contains("org.trycua.lume.upload-time"));
  EXPECT_EQ(m["annotations"]["org.trycua.lume.cpu-count"], "4");

  // Same VM pushed again: a new upload-time, so a new digest.
  const std::string first_digest = "sha256:" + lume_unlock::util::sha256_hex(first);
  ASSERT_EQ(raw(sim->port(), "POST", "/lume/vms/push", push).status, 202);
  const std::string second = await_manifest("acme/tahoe-unlocked:latest", first_digest);
  EXPECT_NE(json::parse(second)["annotations"]["org.trycua.lume.upload-time"],
            m["annotations"]["org.trycua.lume.upload-time"]);

  // What was pushed pulls back into the same disk.
  auto back =
      raw(sim->port(),
          "POST",
          "/lume/pull",
          R"({"image":"tahoe-unlocked:1","name":"again","organization":"acme","registry":")" + reg +
              R"("})");
  ASSERT_EQ(back.status, 200) << back.body;
  EXPECT_EQ(slurp(fs::path(sim->home()) / "again" / "disk.img"), image.disk);
  EXPECT_EQ(slurp(fs::path(sim->home()) / "again" / "nvram.bin"), image.nvram);
}

TEST_F(LumeSimRegistryTest, PushOfAMissingVmIsAcceptedAndUploadsNothing) {
  START(sim);
  auto r = raw(sim->port(),
               "POST",
               "/lume/vms/push",
               R"({"name":"ghost","imageName":"x","tags":["t"],"registry":")" + m_registry->host() +
                   R"("})");
  EXPECT_EQ(r.status, 202);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Handlers.swift handlePush: the outcome is one line on stdout.
  EXPECT_THAT(
      sim->process().stdout_text(),
      HasSubstr("Background push failed for image: x:t - Error: Virtual machine not found: ghost"))
      << sim->process().stdout_text();
  EXPECT_TRUE(skopeo_raw("trycua/x:t").empty());
}

TEST_F(LumeSimRegistryTest, BlobThatDoesNotMatchItsDigestFailsThePullAndLeavesNoVm) {
  auto image = seed("macos-tahoe-cua:latest");
  // Corrupt the nvram blob in the registry's storage (the registry does not re-check on reads).
  const std::string nvram = image.manifest.layers.at(0).digest.hex();
  const fs::path data = fs::path(m_registry->storage_dir()) / "docker/registry/v2/blobs/sha256" /
                        nvram.substr(0, 2) / nvram / "data";
  ASSERT_TRUE(fs::exists(data)) << data;
  std::string bytes = slurp(data);
  bytes[0] = static_cast<char>(bytes[0] ^ 0x55);
  std::ofstream(data, std::ios::binary | std::ios::trunc) << bytes;
  const std::string actual = "sha256:" + lume_unlock::util::sha256_hex(bytes);

  START(sim);
  auto r = raw(sim->port(),
               "POST",
               "/lume/pull",
               R"({"image":"macos-tahoe-cua:latest","name":"demo","registry":")" +
                   m_registry->host() + R"("})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.json_body()["message"],
            "Layer verification failed: expected sha256:" + nvram + ", got " + actual);
  EXPECT_FALSE(fs::exists(fs::path(sim->home()) / "demo"));
}

// Handlers.swift handlePush + ImageContainerRegistry.push + Logger.swift: without credentials in
// the server's environment the push fails in the background; the log (here --log-dir's
// lume_daemon.log, served by GET /lume/logs) has Logger's ERROR line, then handlePush's line.
TEST_F(LumeSimRegistryTest, PushWithoutCredentialsFailsInLumesLogAndUploadsNothing) {
  seed("macos-tahoe-cua:latest");
  lume_unlock::test::TempDir logs("lume-sim-logs");
  START(sim, {"--log-dir", logs.path()}, k_no_credentials);
  ASSERT_EQ(
      raw(sim->port(), "POST", "/lume/pull", R"({"image":"macos-tahoe-cua:latest","name":"demo"})")
          .status,
      200);
  auto r = raw(sim->port(),
               "POST",
               "/lume/vms/push",
               R"({"name":"demo","imageName":"tahoe-unlocked","tags":["1","latest"],"registry":")" +
                   m_registry->host() + R"("})");
  EXPECT_EQ(r.status, 202);
  std::string info;
  for (int i = 0; i < 200 && info.find("Background push") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    info = raw(sim->port(), "GET", "/lume/logs").json_body()["info"].get<std::string>();
  }
  const std::string failed =
      "Background push failed for image: tahoe-unlocked:1,latest - Error: "
      "The operation couldn\u2019t be completed. (lume.PushError error 3.)\n";
  ASSERT_GE(info.size(), failed.size()) << info;
  EXPECT_EQ(info.substr(info.size() - failed.size()), failed) << info;
  const std::string logged = "] ERROR: Missing GitHub credentials. Please set GITHUB_USERNAME and "
                             "GITHUB_TOKEN environment variables\n";
  const auto at = info.find(logged);
  ASSERT_NE(at, std::string::npos) << info;
  EXPECT_EQ(at + logged.size(), info.size() - failed.size()) << "ERROR line right before";
  const auto open = info.rfind('[', at);
  ASSERT_NE(open, std::string::npos);
  EXPECT_EQ(info.substr(open + 11, 1), "T")
      << "ISO8601 timestamp: " << info.substr(open, at - open);
  EXPECT_EQ(info.substr(at - 1, 1), "Z");
  EXPECT_TRUE(skopeo_raw("trycua/tahoe-unlocked:1").empty());
}

// Handlers.swift handleGetLogs: without the LaunchAgent's files Lume answers these texts; and
// Server.swift's routing makes the documented ?type=&lines= form a 404 (lume-api.md §1.4).
TEST_F(LumeSimRegistryTest, LogsWithoutTheLaunchAgentAreNotFoundAndQueriesAre404) {
  START(sim);
  auto r = raw(sim->port(), "GET", "/lume/logs");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json_body(),
            json({{"info", "Info log file not found"}, {"error", "Error log file not found"}}));
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/logs?type=info&lines=50").status, 404);
}

// ImageContainerRegistry.swift (getToken, fetchManifest): every URL is https://<registry>/...;
// a plain-HTTP registry never answers the TLS handshake, so the manifest fetch fails. A registry
// whose CA the Mac does not trust fails the same way.
TEST_F(LumeSimRegistryTest, PlainHttpAndUntrustedRegistriesFailThePullLikeLume) {
  std::string why_not;
  auto plain = RegistryServer::start(why_not, RegistryServer::Transport::plain_http);
  ASSERT_NE(plain, nullptr) << why_not;
  oci::RegistryClient insecure(plain->client_options());
  ASSERT_TRUE(
      lume_unlock::test::seed_lume_image(
          insecure, oci::parse_reference(plain->host() + "/trycua/macos-tahoe-cua:latest").value())
          .ok());
  seed("macos-tahoe-cua:latest");
  START(sim);
  auto from_plain =
      raw(sim->port(),
          "POST",
          "/lume/pull",
          R"({"image":"macos-tahoe-cua:latest","name":"a","registry":")" + plain->host() + R"("})");
  EXPECT_EQ(from_plain.status, 400);
  EXPECT_EQ(from_plain.json_body()["message"], "Failed to fetch image manifest from registry.");
  EXPECT_FALSE(fs::exists(fs::path(sim->home()) / "a"));

  auto untrusting = std::make_unique<LumeSim>(
      LUME_SIM_BINARY, std::vector<std::string>{"--registry", m_registry->host()});
  ASSERT_TRUE(untrusting->started()) << untrusting->failure();
  auto from_untrusted = raw(
      untrusting->port(), "POST", "/lume/pull", R"({"image":"macos-tahoe-cua:latest","name":"b"})");
  EXPECT_EQ(from_untrusted.status, 400);
  EXPECT_EQ(from_untrusted.json_body()["message"], "Failed to fetch image manifest from registry.");
}

// RegistryFactory.createRegistry: the request's registry/organization only when one differs
// from ghcr.io/trycua; otherwise config.yaml's registry block, which GET /lume/config shows.
TEST_F(LumeSimRegistryTest, TheConfiguredRegistryReplacesTheDefaultsAndShowsInTheConfig) {
  lume_unlock::test::LumeImageSpec spec;
  oci::RegistryClient client(m_registry->client_options());
  auto image = lume_unlock::test::seed_lume_image(
      client, oci::parse_reference(m_registry->host() + "/acme/tahoe:v1").value(), spec);
  ASSERT_TRUE(image.ok()) << image.error().message();
  START(sim, {"--registry-organization", "acme"});
  EXPECT_EQ(raw(sim->port(), "GET", "/lume/config").json_body()["registry"],
            json({{"type", "ghcr"},
                  {"ghcr", {{"registry", m_registry->host()}, {"organization", "acme"}}}}));
  auto r = raw(sim->port(),
               "POST",
               "/lume/pull",
               R"({"image":"tahoe:v1","name":"d","registry":"ghcr.io","organization":"trycua"})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(slurp(fs::path(sim->home()) / "d" / ".manifest-digest"), image.value().digest.str());
}

} // namespace
