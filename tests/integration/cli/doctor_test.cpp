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

} // namespace
} // namespace lume_unlock::cli
