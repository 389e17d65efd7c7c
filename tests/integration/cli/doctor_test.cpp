// `lume-unlock doctor` against lume-sim, a loopback registry seeded with a Lume image, and the
// shim bundle of this build tree.
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "support/cli_run.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/lume_sim.hpp"
#include "support/process.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <sstream>

namespace lume_unlock::cli {
namespace {

using test::CliRun;

test::CliRun run(const std::vector<std::string>& args) {
  return test::run_lume_unlock(args);
}

nlohmann::json check_named(const nlohmann::json& doc, const std::string& name) {
  for (const auto& c : doc["checks"]) {
    if (c["name"] == name) {
      return c;
    }
  }
  return {};
}

class DoctorTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    registry = test::RegistryServer::start(why);
    LUME_UNLOCK_REQUIRE(registry != nullptr, why);
    setenv("SSL_CERT_FILE", registry->ca_file().c_str(), 1); // the CA for lume-unlock
    lume = std::make_unique<test::LumeSim>(LUME_SIM_BINARY);
    LUME_UNLOCK_REQUIRE(lume->started(), lume->failure());
    image = registry->host() + "/trycua/macos-tahoe-cua:latest";
    oci::RegistryClient client(registry->client_options());
    seeded =
        test::seed_lume_image(client, oci::parse_reference(image).value()).value().digest.str();
    ASSERT_TRUE(util::write_file_atomic(dir / "r.yaml", "source: {image: " + image + "}\n").ok());
  }

  void TearDown() override { unsetenv("SSL_CERT_FILE"); }
  std::unique_ptr<test::RegistryServer> registry;
  std::unique_ptr<test::LumeSim> lume;
  test::TempDir dir;
  std::string image;
  std::string seeded;
};

TEST_F(DoctorTest, AllChecksPassAgainstWorkingServices) {
  auto r = run({"--json",
                "--lume-url",
                lume->url(),
                "--state-dir",
                dir / "state",
                "doctor",
                "--recipe",
                dir / "r.yaml",
                "--bundle",
                LUME_UNLOCK_BUNDLE_DIR});
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(check_named(doc, "lume")["status"], "ok") << r.out;
  EXPECT_EQ(check_named(doc, "lume")["detail"],
            "reachable at " + lume->url() + ": 0 VMs, 0 of 2 allowed running");
  EXPECT_EQ(check_named(doc, "state-dir")["status"], "ok");
  EXPECT_EQ(check_named(doc, "host-preference")["status"], "skip");
  EXPECT_EQ(check_named(doc, "registry")["status"], "ok");
  EXPECT_EQ(check_named(doc, "registry")["detail"], image + " resolves to " + seeded);
  const std::string bundle = check_named(doc, "bundle")["status"];
  EXPECT_TRUE(bundle == "ok" || bundle == "warn") << r.out;
  EXPECT_NE(check_named(doc, "bundle")["detail"].get<std::string>().find("files verified"),
            std::string::npos);
  const bool any_fail = check_named(doc, "disk")["status"] == "fail";
  EXPECT_EQ(doc["ok"], !any_fail);
  EXPECT_EQ(r.exit_code, any_fail ? 1 : 0);
}

TEST_F(DoctorTest, StoppedLumeAndMissingImageFailWithTheFix) {
  lume->stop();
  ASSERT_TRUE(util::write_file_atomic(dir / "missing.yaml",
                                      "source: {image: " + registry->host() + "/trycua/none:1}\n")
                  .ok());
  auto r = run({"--lume-url",
                lume->url(),
                "--state-dir",
                dir / "state",
                "doctor",
                "--recipe",
                dir / "missing.yaml",
                "--bundle",
                dir / "no-bundle"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("fail lume            host status: cannot connect to Lume at " +
                       lume->url() + ": connection refused"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fix: start Lume with `lume serve` (or pass --lume-url)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fail registry        "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fail bundle          shim bundle '" + (dir / "no-bundle") +
                       "' (from --bundle): it does not exist"),
            std::string::npos)
      << r.out;
}

/// The lume-version check when `lume --version` prints `printed` (a script first on PATH), or
/// with no `lume` at all (`printed` empty: PATH and HOME lead to none).
nlohmann::json lume_version_check(const test::TempDir& dir,
                                  const std::string& lume_url,
                                  const std::string& printed) {
  const std::string bin = dir / (printed.empty() ? "empty-bin" : "bin");
  EXPECT_TRUE(util::make_directories(bin, 0755).ok());
  if (!printed.empty()) {
    EXPECT_TRUE(
        util::write_file_atomic(bin + "/lume", "#!/bin/sh\necho '" + printed + "'\n", 0755).ok());
  }
  const std::string path = std::getenv("PATH");
  const std::string home = std::getenv("HOME") != nullptr ? std::getenv("HOME") : "";
  setenv("PATH", (printed.empty() ? bin : bin + ":" + path).c_str(), 1);
  setenv("HOME", (dir / "home").c_str(), 1);
  auto r = run({"--json", "--lume-url", lume_url, "doctor", "--bundle", dir / "none"});
  setenv("PATH", path.c_str(), 1);
  setenv("HOME", home.c_str(), 1);
  return check_named(nlohmann::json::parse(r.out), "lume-version");
}

TEST_F(DoctorTest, LumeOlderThan053IsAWarningNewerOnesAreFine) {
  const std::string lume_bin = dir / "bin/lume";
  auto old = lume_version_check(dir, lume->url(), "0.5.1");
  EXPECT_EQ(old["status"], "warn") << old;
  EXPECT_EQ(old["detail"],
            "Lume 0.5.1 (" + lume_bin +
                ") is older than 0.5.3, the first whose pulls rebuild images that reuse a chunk "
                "digest (trycua/cua#3066)");
  EXPECT_NE(old["fix"].get<std::string>().find("update Lume"), std::string::npos);
  for (const std::string version : {"0.5.3", "0.6.0", "0.5.4-nightly.20260812", "1.0.0"}) {
    auto fine = lume_version_check(dir, lume->url(), version);
    EXPECT_EQ(fine["status"], "ok") << fine;
    EXPECT_EQ(fine["detail"], "Lume " + version + " (" + lume_bin + ")");
  }
  auto garbled = lume_version_check(dir, lume->url(), "lume");
  EXPECT_EQ(garbled["status"], "warn") << garbled;
  auto none = lume_version_check(dir, lume->url(), "");
  EXPECT_EQ(none["status"], "skip") << none;
  EXPECT_EQ(none["fix"], "lume-unlock needs Lume 0.5.3 or newer");
}

} // namespace
} // namespace lume_unlock::cli
