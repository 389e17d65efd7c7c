// A recipe's trust: block in `pull --recipe`, against lume-sim and docker-registry over TLS: a
// signed digest is pulled and its key recorded; an unsigned one, or one signed by another key,
// is refused with exit 6 before Lume is asked to pull, by a real pull and by --dry-run alike.
#include "oci/registry_client.hpp"
#include "provenance/provenance.hpp"
#include "support/cli_run.hpp"
#include "support/file_io.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/lume_sim.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/ecdsa_key.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>

namespace lume_unlock {
namespace {

class CliTrust : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why_not;
    m_registry = test::RegistryServer::start(why_not);
    LUME_UNLOCK_REQUIRE(m_registry != nullptr, why_not);
    setenv("SSL_CERT_FILE", m_registry->ca_file().c_str(), 1);
    oci::RegistryClient client(m_registry->client_options());
    test::LumeImageSpec spec;
    spec.disk_bytes = 256 * 1024;
    auto image = test::seed_lume_image(
        client, oci::parse_reference(m_registry->host() + "/acme/tahoe:1").value(), spec);
    ASSERT_TRUE(image.ok()) << image.error().message();
    m_tagged = image.value().reference.str();
    m_pinned = image.value().reference.pinned(image.value().digest).str();
    for (const char* name : {"release", "stranger"}) {
      ASSERT_EQ(test::run_lume_unlock({"key", "generate", m_dir / name}).exit_code, 0);
    }
    m_sim = std::make_unique<test::LumeSim>(
        LUME_SIM_BINARY, std::vector<std::string>{"--registry-ca", m_registry->ca_file()});
    ASSERT_TRUE(m_sim->started()) << m_sim->failure();
  }
  void TearDown() override { unsetenv("SSL_CERT_FILE"); }

  /// A recipe whose trust block lists `key_entry` (a path relative to the recipe, or PEM).
  std::string recipe_trusting(const std::string& key_entry) {
    std::string entry = key_entry;
    if (entry.find("-----BEGIN") != std::string::npos) {
      std::string indented;
      for (char c : entry) {
        indented += c;
        if (c == '\n') {
          indented += "        ";
        }
      }
      entry = "|\n        " + indented;
    }
    test::write_file(m_dir / "recipe.yaml",
                     "source:\n  image: " + m_pinned + "\ntrust:\n  keys:\n    - " + entry + "\n");
    return m_dir / "recipe.yaml";
  }
  /// `lume-unlock GLOBAL… --lume-url … pull TAGGED demo --recipe RECIPE EXTRA…`.
  test::CliRun pull(const std::string& recipe,
                    const std::vector<std::string>& extra = {},
                    std::vector<std::string> global = {}) {
    std::vector<std::string> args = std::move(global);
    args.insert(args.end(),
                {"--lume-url",
                 m_sim->url(),
                 "--state-dir",
                 m_state.path(),
                 "pull",
                 m_tagged,
                 "demo",
                 "--recipe",
                 recipe});
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_lume_unlock(args);
  }
  bool lume_was_asked_to_pull() {
    return m_sim->process().stderr_text().find("POST /lume/pull") != std::string::npos;
  }
  std::string fingerprint(const std::string& name) {
    return util::EcdsaPublicKey::from_pem(test::slurp(m_dir / (name + ".pub")), name)
        .value()
        .fingerprint();
  }

  std::unique_ptr<test::RegistryServer> m_registry;
  std::unique_ptr<test::LumeSim> m_sim;
  test::TempDir m_dir;
  test::TempDir m_state{"cli-trust-state"};
  std::string m_tagged; ///< what is pulled: Lume pulls tags; the signature covers its digest
  std::string m_pinned;
};

TEST_F(CliTrust, ASignedDigestIsPulledAndTheKeyThatVouchedIsRecorded) {
  ASSERT_EQ(test::run_lume_unlock({"sign", m_pinned, "--key", m_dir / "release.key"}).exit_code, 0);
  auto r = pull(recipe_trusting("release.pub"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("signature verified"), std::string::npos) << r.err;
  auto record = provenance::read_provenance(m_state.path(), "demo");
  ASSERT_TRUE(record.ok()) << record.error().message();
  EXPECT_EQ(record.value().image->signed_by, fingerprint("release"));
}

TEST_F(CliTrust, AnInlinePemKeyInTheRecipeIsTrustedToo) {
  ASSERT_EQ(test::run_lume_unlock({"sign", m_pinned, "--key", m_dir / "release.key"}).exit_code, 0);
  auto r = pull(recipe_trusting(test::slurp(m_dir / "release.pub")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(CliTrust, AnUnsignedImageIsRefusedBeforeLumePullsAnything) {
  auto r = pull(recipe_trusting("release.pub"));
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_NE(r.err.find("not signed"), std::string::npos) << r.err;
  EXPECT_FALSE(lume_was_asked_to_pull());
  EXPECT_FALSE(std::filesystem::exists(m_sim->home() + "/demo"));
  EXPECT_FALSE(provenance::read_provenance(m_state.path(), "demo").ok());
}

TEST_F(CliTrust, AnImageSignedByAnotherKeyIsRefusedBeforeLumePullsAnything) {
  ASSERT_EQ(test::run_lume_unlock({"sign", m_pinned, "--key", m_dir / "stranger.key"}).exit_code,
            0);
  auto r = pull(recipe_trusting("release.pub"));
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_NE(r.err.find("signed by another key"), std::string::npos) << r.err;
  EXPECT_FALSE(lume_was_asked_to_pull());
  EXPECT_FALSE(std::filesystem::exists(m_sim->home() + "/demo"));
}

TEST_F(CliTrust, ADryRunVerifiesTheSignatureAndShowsTheKeyThatVouched) {
  ASSERT_EQ(test::run_lume_unlock({"sign", m_pinned, "--key", m_dir / "release.key"}).exit_code, 0);
  const std::string recipe = recipe_trusting("release.pub");
  auto dry = pull(recipe, {"--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  const std::string digest = m_pinned.substr(m_pinned.find('@') + 1);
  EXPECT_NE(dry.out.find("signature verified: " + digest + " signed by " + fingerprint("release") +
                         " (" + (m_dir / "release.pub") + ")"),
            std::string::npos)
      << dry.out;
  auto json = pull(recipe, {"--dry-run"}, {"--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["signature"]["key"], fingerprint("release")) << doc;
  EXPECT_EQ(doc["steps"][0]["in_place"], false) << doc; // to do: Lume pulls it
  EXPECT_FALSE(doc.contains("conflict")) << doc;
  EXPECT_FALSE(lume_was_asked_to_pull());
  EXPECT_FALSE(provenance::read_provenance(m_state.path(), "demo").ok());
}

TEST_F(CliTrust, ADryRunRefusesAnUnsignedImageWithThePullsOwnMessage) {
  const std::string recipe = recipe_trusting("release.pub");
  auto dry = pull(recipe, {"--dry-run"});
  EXPECT_EQ(dry.exit_code, 6) << dry.out << dry.err;
  EXPECT_NE(dry.err.find("not signed"), std::string::npos) << dry.err;
  EXPECT_EQ(dry.out, "");
  auto real = pull(recipe);
  EXPECT_EQ(real.exit_code, 6) << real.err;
  // The real pull says the same as its image step (after that step's progress line), with the
  // command that resumes it.
  const std::string prefix = "lume-unlock: error: ";
  const auto hint_at = dry.err.find("\nhint: ");
  ASSERT_EQ(dry.err.rfind(prefix, 0), 0u) << dry.err;
  ASSERT_NE(hint_at, std::string::npos) << dry.err;
  ASSERT_NE(real.err.find(prefix), std::string::npos) << real.err;
  EXPECT_EQ(real.err.substr(real.err.find(prefix)),
            prefix +
                "pull step 'image': " + dry.err.substr(prefix.size(), hint_at - prefix.size()) +
                dry.err.substr(hint_at, dry.err.size() - hint_at - 1) +
                "; then re-run 'lume-unlock pull " + m_tagged + " demo --recipe " + recipe +
                "' to resume from this step\n");
  EXPECT_FALSE(lume_was_asked_to_pull());
}

TEST_F(CliTrust, ADryRunRefusesAnImageSignedByAnotherKey) {
  ASSERT_EQ(test::run_lume_unlock({"sign", m_pinned, "--key", m_dir / "stranger.key"}).exit_code,
            0);
  auto dry = pull(recipe_trusting("release.pub"), {"--dry-run"});
  EXPECT_EQ(dry.exit_code, 6) << dry.err;
  EXPECT_NE(dry.err.find("signed by another key"), std::string::npos) << dry.err;
  EXPECT_FALSE(lume_was_asked_to_pull());
}

TEST_F(CliTrust, AMissingTrustKeyFileIsAUsageErrorNamingTheEntry) {
  auto r = pull(recipe_trusting("nowhere.pub"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("trust.keys[0]"), std::string::npos) << r.err;
  EXPECT_FALSE(lume_was_asked_to_pull());
}

} // namespace
} // namespace lume_unlock
