// `lume-unlock resolve` and `lume-unlock lock` driven in-process against a real registry.
#include "oci/registry_client.hpp"
#include "recipe/recipe.hpp"
#include "support/cli_run.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace lume_unlock::cli {
namespace {

using test::CliRun;

test::CliRun run(const std::vector<std::string>& args) {
  return test::run_lume_unlock(args);
}

class CliRegistryTest : public ::testing::Test {
protected:
  void SetUp() override {
    m_server = test::RegistryServer::start(m_why_not);
    LUME_UNLOCK_REQUIRE(m_server != nullptr, m_why_not);
    // The registry's throwaway CA reaches the command line through SSL_CERT_FILE.
    setenv("SSL_CERT_FILE", m_server->ca_file().c_str(), 1);
    oci::RegistryClient client(m_server->client_options());
    auto seeded = test::seed_lume_image(
        client, oci::parse_reference(m_server->host() + "/lume/cli:v1").value());
    ASSERT_TRUE(seeded.ok()) << seeded.error().message();
    m_digest = seeded.value().digest.str();
    m_size = seeded.value().manifest_bytes.size();
  }
  void TearDown() override { unsetenv("SSL_CERT_FILE"); }
  std::unique_ptr<test::RegistryServer> m_server;
  std::string m_why_not;
  std::string m_digest;
  std::size_t m_size = 0;
};

TEST_F(CliRegistryTest, ResolvePrintsTheVerifiedDigest) {
  auto r = run({"resolve", m_server->host() + "/lume/cli:v1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, m_digest + "\n");
}

TEST_F(CliRegistryTest, ResolveJsonHasMediaTypeSizeAndPinnedReference) {
  auto r = run({"resolve", m_server->host() + "/lume/cli:v1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out),
            (nlohmann::json{{"reference", m_server->host() + "/lume/cli:v1"},
                            {"digest", m_digest},
                            {"media_type", "application/vnd.oci.image.manifest.v1+json"},
                            {"size", m_size},
                            {"pinned", m_server->host() + "/lume/cli@" + m_digest}}));
}

TEST_F(CliRegistryTest, ResolveOfAMissingTagExitsWithTheRegistryCode) {
  unsetenv("SSL_CERT_FILE"); // --registry-ca alone names the CA
  auto r = run({"resolve",
                m_server->host() + "/lume/cli:nope",
                "--insecure-registry",
                "other.lan",
                "--registry-ca",
                m_server->ca_file()});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(
      r.err,
      "lume-unlock: error: cannot get manifest '" + m_server->host() +
          "/lume/cli:nope': GET https://" + m_server->host() +
          "/v2/lume/cli/manifests/nope answered HTTP 404: MANIFEST_UNKNOWN: manifest unknown\n"
          "hint: check the repository and tag (skopeo list-tags docker://REPOSITORY lists the "
          "tags)\n");
}

TEST_F(CliRegistryTest, ARegistryCertificateFromAnUntrustedCaFailsVerification) {
  unsetenv("SSL_CERT_FILE"); // the system store does not know the throwaway CA
  auto r = run({"resolve", m_server->host() + "/lume/cli:v1"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("GET https://" + m_server->host() + "/v2/lume/cli/manifests/v1 failed"),
            std::string::npos)
      << r.err;
  EXPECT_NE(
      r.err.find("hint: the registry's TLS certificate did not verify against the system's CAs; "
                 "name the CA that signed it with --registry-ca FILE, the recipe's registry.ca, "
                 "or SSL_CERT_FILE"),
      std::string::npos)
      << r.err;
}

TEST_F(CliRegistryTest, LockOfAPlainHttpRegistrySaysSoAndExitsTwo) {
  std::string why_not;
  auto plain = test::RegistryServer::start(why_not, test::RegistryServer::Transport::plain_http);
  ASSERT_NE(plain, nullptr) << why_not;
  test::TempDir dir;
  ASSERT_TRUE(util::write_file_atomic(dir / "tahoe.yaml",
                                      "source:\n  image: " + plain->host() + "/lume/cli:v1\n")
                  .ok());
  auto r = run({"lock", dir / "tahoe.yaml"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("lume-unlock: error: cannot get manifest '" + plain->host() +
                       "/lume/cli:v1': " + plain->host() +
                       " speaks plain HTTP; Lume reaches registries over HTTPS only (GET https://" +
                       plain->host() + "/v2/lume/cli/manifests/v1: "),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::ifstream(dir / "tahoe.lock.json").good()) << "no lock file was written";
}

TEST_F(CliRegistryTest, ResolveOfABadReferenceIsUsage) {
  auto r = run({"resolve", "UPPER/case"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err.rfind(
          "lume-unlock: error: invalid image reference 'UPPER/case': repository component 'UPPER'",
          0),
      0u)
      << r.err;
}

TEST_F(CliRegistryTest, LockWritesTheRecipeHashAndEveryDigest) {
  test::TempDir dir;
  const std::string recipe = "source:\n  image: " + m_server->host() + "/lume/cli:v1\n";
  ASSERT_TRUE(util::write_file_atomic(dir / "tahoe.yaml", recipe).ok());
  auto r = run({"lock", dir / "tahoe.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "wrote " + (dir / "tahoe.lock.json") + "\n  source.image: " + m_server->host() +
                "/lume/cli:v1 -> " + m_digest + "\n");
  auto lock = recipe::parse_lock_file(util::read_file(dir / "tahoe.lock.json").value(), "lock");
  ASSERT_TRUE(lock.ok()) << lock.error().message();
  EXPECT_EQ(lock.value().recipe_sha256, util::sha256_hex(recipe));
  ASSERT_EQ(lock.value().references.size(), 1u);
  EXPECT_EQ(lock.value().references[0].digest, m_digest);
  EXPECT_EQ(lock.value().references[0].pinned, m_server->host() + "/lume/cli@" + m_digest);
}

TEST_F(CliRegistryTest, LockOfARecipeWithoutAnImageWritesNothing) {
  test::TempDir dir;
  ASSERT_TRUE(util::write_file_atomic(dir / "r.yaml", "vm: {cpu: 4}\n").ok());
  auto r = run({"lock", dir / "r.yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "lume-unlock: error: " + (dir / "r.yaml") +
                ": source: is required\nhint: add 'source: {image: "
                "ghcr.io/trycua/macos-tahoe-cua:latest}'\n");
  EXPECT_FALSE(std::ifstream(dir / "r.lock.json").good());
}

} // namespace
} // namespace lume_unlock::cli
