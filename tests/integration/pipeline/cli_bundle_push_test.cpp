// `lume-unlock bundle push` against a real registry (docker-registry), checked with skopeo.
#include "bundle/bundle.hpp"
#include "support/cli_run.hpp"
#include "support/process.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace lume_unlock {
namespace {

using test::CliRun;

test::CliRun run(const std::vector<std::string>& args) {
  return test::run_lume_unlock(args);
}

using nlohmann::json;
const char* const k_skopeo = "/usr/bin/skopeo";

class CliBundlePush : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why_not;
    m_registry = test::RegistryServer::start(why_not);
    LUME_UNLOCK_REQUIRE(m_registry != nullptr, why_not);
    setenv("SSL_CERT_FILE", m_registry->ca_file().c_str(), 1); // the CA for lume-unlock
    LUME_UNLOCK_REQUIRE(access(k_skopeo, X_OK) == 0,
                        "skopeo is not installed (run scripts/bootstrap)");
    const std::string shim = m_dir / "liblume_unlock_shim.so";
    const std::string probe = m_dir / "lume_unlock_probe";
    std::ofstream(shim) << "shim bytes";
    std::ofstream(probe) << "probe bytes";
    auto built = bundle::build_bundle(
        bundle::BundleSpec{"0.1.0", "abc123", {{"linux-x86_64", "LD_PRELOAD", shim, probe, {}}}},
        m_dir / "out");
    ASSERT_TRUE(built.ok()) << built.error().message();
    m_archive = built.value().archive;
    m_bundle_json = util::read_file(built.value().directory + "/bundle.json").value();
  }

  std::string skopeo_raw(const std::string& ref) {
    auto r = test::run_command(
        {k_skopeo, "inspect", "--raw", m_registry->skopeo_trust(), "docker://" + ref});
    EXPECT_EQ(r.exit_status, 0) << r.stderr_text;
    return r.stdout_text;
  }

  test::TempDir m_dir{"cli-bundle-push"};
  void TearDown() override { unsetenv("SSL_CERT_FILE"); }
  std::unique_ptr<test::RegistryServer> m_registry;
  std::string m_archive;
  std::string m_bundle_json;
};

TEST_F(CliBundlePush, PrintsThePinnedReferenceOfAnArtifactSkopeoSeesByteForByte) {
  const std::string ref = m_registry->host() + "/acme/lume-unlock-shim:0.1.0";
  auto r = run({"bundle", "push", m_archive, ref});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string raw = skopeo_raw(ref);
  const std::string digest = "sha256:" + util::sha256_hex(raw);
  EXPECT_EQ(r.out, ref + "@" + digest + "\n");

  json m = json::parse(raw);
  EXPECT_EQ(m["mediaType"], "application/vnd.oci.image.manifest.v1+json");
  EXPECT_EQ(m["artifactType"], "application/vnd.lume-unlock.shim-bundle.v1");
  EXPECT_EQ(m["config"]["mediaType"], "application/vnd.lume-unlock.shim-bundle.config.v1+json");
  EXPECT_EQ(m["config"]["digest"], "sha256:" + util::sha256_hex(m_bundle_json));
  EXPECT_EQ(m["config"]["size"], m_bundle_json.size());
  ASSERT_EQ(m["layers"].size(), 1u);
  EXPECT_EQ(m["layers"][0]["mediaType"],
            "application/vnd.lume-unlock.shim-bundle.layer.v1.tar+gzip");
  EXPECT_EQ(m["layers"][0]["digest"], "sha256:" + util::sha256_file_hex(m_archive).value());
  EXPECT_EQ(m["layers"][0]["annotations"]["org.opencontainers.image.title"],
            "lume-unlock-shim-bundle-0.1.0.tar.gz");
  EXPECT_EQ(m["annotations"]["org.opencontainers.image.version"], "0.1.0");

  // skopeo fetches the layer: the archive's bytes; by digest, the same manifest.
  test::TempDir copy("cli-bundle-copy");
  auto fetched =
      test::run_command({k_skopeo,
                         "copy",
                         "--quiet",
                         m_registry->skopeo_trust("src-"),
                         "docker://" + m_registry->host() + "/acme/lume-unlock-shim@" + digest,
                         "dir:" + copy.path()});
  ASSERT_EQ(fetched.exit_status, 0) << fetched.stderr_text;
  const std::string layer_hex = m["layers"][0]["digest"].get<std::string>().substr(7);
  EXPECT_EQ(util::read_file(copy / layer_hex).value(), util::read_file(m_archive).value());

  // Same archive, same name: the same digest (no timestamps in the artifact).
  auto again = run({"--json", "bundle", "push", m_archive, ref});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json::parse(again.out)["digest"], digest);
  EXPECT_EQ(json::parse(again.out)["pinned"], ref + "@" + digest);
}

TEST_F(CliBundlePush, TamperedArchiveOrADigestReferenceIsRefusedBeforeUploading) {
  auto by_digest = run({"bundle",
                        "push",
                        m_archive,
                        m_registry->host() + "/acme/shim@sha256:" + std::string(64, 'a')});
  EXPECT_EQ(by_digest.exit_code, 2) << by_digest.err;
  const std::string bogus = m_dir / "not-a-bundle.tar.gz";
  std::ofstream(bogus) << "not gzip";
  auto bad = run({"bundle", "push", bogus, m_registry->host() + "/acme/shim:1"});
  EXPECT_NE(bad.exit_code, 0);
  auto list = test::run_command({k_skopeo,
                                 "list-tags",
                                 m_registry->skopeo_trust(),
                                 "docker://" + m_registry->host() + "/acme/shim"});
  EXPECT_NE(list.exit_status, 0) << "nothing may have been pushed: " << list.stdout_text;
}

} // namespace
} // namespace lume_unlock
