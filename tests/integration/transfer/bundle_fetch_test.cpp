// Shim bundles fetched by digest from a real registry (docker-registry on loopback): the build
// tree's archive published as `lume-unlock bundle push` publishes it, then loaded through
// transfer::fetch_bundle and through the command line's --bundle REF@sha256:….
#include "bundle/bundle.hpp"
#include "oci/manifest.hpp"
#include "oci/registry_client.hpp"
#include "support/cli_run.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/process.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "transfer/shim_bundle.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <vector>

namespace lume_unlock::transfer {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> entries_of(const std::string& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

class BundleFetch : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why_not;
    m_registry = test::RegistryServer::start(why_not);
    LUME_UNLOCK_REQUIRE(m_registry != nullptr, why_not);
    m_client = oci::RegistryClient(m_registry->client_options());
    // The shim-bundle target is a dependency of this test: its archive must be there.
    ASSERT_TRUE(fs::is_regular_file(SHIM_BUNDLE_ARCHIVE)) << SHIM_BUNDLE_ARCHIVE;
    m_tagged = oci::parse_reference(m_registry->host() + "/acme/lume-unlock-shim:build").value();
    auto published = publish_bundle(m_client, SHIM_BUNDLE_ARCHIVE, m_tagged);
    ASSERT_TRUE(published.ok()) << published.error().message();
    m_published = published.value();
    m_pinned = m_tagged.str() + "@" + m_published->digest.str();
  }

  oci::Reference pinned() const { return oci::parse_reference(m_pinned).value(); }

  /// Pushes `manifest` under `tag` in the bundle's repository; returns REF@digest.
  std::string push_manifest(const oci::Manifest& manifest, const std::string& tag) {
    const auto ref = oci::parse_reference(m_registry->host() + "/acme/lume-unlock-shim:" + tag);
    auto digest = m_client.push_manifest(
        ref.value(), oci::serialize(manifest), oci::media_type::oci_manifest);
    EXPECT_TRUE(digest.ok()) << digest.error().message();
    return ref.value().str() + "@" + digest.value().str();
  }

  /// The layer blob as docker-registry's filesystem driver stores it.
  std::string stored_layer() const {
    const std::string hex = m_published->manifest.layers.front().digest.hex();
    return m_registry->storage_dir() + "/docker/registry/v2/blobs/sha256/" + hex.substr(0, 2) +
           "/" + hex + "/data";
  }

  std::unique_ptr<test::RegistryServer> m_registry;
  oci::RegistryClient m_client;
  oci::Reference m_tagged;
  std::optional<PublishedBundle> m_published;
  std::string m_pinned;
  test::TempDir m_work{"bundle-fetch-work"};
  test::TempDir m_files{"bundle-fetch-files"};
};

TEST_F(BundleFetch, LoadsThePublishedBuildBundleByDigestWithEveryFileVerified) {
  const auto build_tree = bundle::load_bundle_directory(SHIM_BUNDLE_DIR).value();
  {
    auto fetched = fetch_bundle(m_client, pinned(), m_work.path());
    ASSERT_TRUE(fetched.ok()) << fetched.error().message();
    const bundle::LoadedBundle& loaded = fetched.value().bundle;
    EXPECT_EQ(loaded.manifest(), build_tree.manifest());
    ASSERT_FALSE(loaded.manifest().files().empty());
    for (const auto& file : loaded.manifest().files()) {
      EXPECT_EQ(util::sha256_file_hex(loaded.local_path(file)).value(), file.sha256) << file.path;
      EXPECT_EQ(util::read_file(loaded.local_path(file)).value(),
                util::read_file(build_tree.local_path(file)).value())
          << file.path;
    }
    EXPECT_EQ(fetched.value().reference.digest, m_published->digest);
    EXPECT_EQ(fetched.value().layer.digest.hex(),
              util::sha256_file_hex(SHIM_BUNDLE_ARCHIVE).value());
    // Only the extracted bundle stays while it is in use: the downloaded archive is gone.
    const auto entries = entries_of(m_work.path());
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].rfind("lume-unlock-bundle.", 0), 0u) << entries[0];
  }
  EXPECT_TRUE(entries_of(m_work.path()).empty());
}

TEST_F(BundleFetch, AWrongDigestIsARegistryErrorNamingTheReference) {
  const std::string wrong = oci::Digest::of_bytes("not the bundle").str();
  auto ref = oci::parse_reference(m_tagged.repository_path() + "@" + wrong).value();
  auto fetched = fetch_bundle(m_client, ref, m_work.path());
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::registry);
  EXPECT_NE(fetched.error().message().find(m_tagged.repository_path() + "@" + wrong),
            std::string::npos)
      << fetched.error().message();
  EXPECT_TRUE(entries_of(m_work.path()).empty());
}

TEST_F(BundleFetch, ATagAloneIsAUsageErrorAndNothingIsAsked) {
  oci::RegistryClient fresh(m_registry->client_options());
  auto fetched = fetch_bundle(fresh, m_tagged, m_work.path());
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::usage);
  EXPECT_EQ(fetched.error().message(),
            "shim bundle '" + m_tagged.str() + "': a registry reference must be pinned by digest");
  EXPECT_EQ(fetched.error().hint(),
            "pin it by digest: lume-unlock resolve " + m_tagged.str() + " prints it");
  EXPECT_EQ(fresh.request_count(), 0u);
}

TEST_F(BundleFetch, AConfigThatIsAnotherBundlesBundleJsonIsRefused) {
  // A second, different bundle: its bundle.json goes in as the config, the build tree's archive
  // as the layer, so each blob is intact and only their pairing is wrong.
  const std::string shim = m_files / "liblume_unlock_shim.so";
  const std::string probe = m_files / "lume-unlock-probe";
  std::ofstream(shim) << "another shim";
  std::ofstream(probe) << "another probe";
  auto other = bundle::build_bundle(
      bundle::BundleSpec{"9.9.9", "other", {{"linux-x86_64", "LD_PRELOAD", shim, probe, {}}}},
      m_files / "out");
  ASSERT_TRUE(other.ok()) << other.error().message();
  const std::string other_json = util::read_file(other.value().directory + "/bundle.json").value();
  auto config = m_client.push_blob_bytes(m_tagged, other_json, oci::media_type::shim_bundle_config);
  ASSERT_TRUE(config.ok()) << config.error().message();
  oci::Manifest mixed = m_published->manifest;
  mixed.config = config.value();
  const std::string ref = push_manifest(mixed, "mixed");

  auto fetched = fetch_bundle(m_client, oci::parse_reference(ref).value(), m_work.path());
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::registry);
  EXPECT_EQ(fetched.error().message(),
            "shim bundle '" + oci::parse_reference(ref).value().str() + "': its config '" +
                config.value().digest.str() + "' is not the bundle.json inside its layer ('" +
                m_published->manifest.config->digest.str() + "')");
  EXPECT_TRUE(entries_of(m_work.path()).empty()) << "the extracted copy is removed";
}

TEST_F(BundleFetch, ALayerTamperedInTheRegistryFailsItsDigestCheck) {
  std::string bytes = util::read_file(stored_layer()).value();
  ASSERT_FALSE(bytes.empty());
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x01); // same size
  ASSERT_TRUE(util::write_file_atomic(stored_layer(), bytes, 0644).ok());

  auto fetched = fetch_bundle(m_client, pinned(), m_work.path());
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::registry);
  EXPECT_NE(fetched.error().message().find(m_published->manifest.layers.front().digest.str()),
            std::string::npos)
      << fetched.error().message();
  EXPECT_TRUE(entries_of(m_work.path()).empty());
}

TEST_F(BundleFetch, ManifestsThatAreNotAShimBundleAreRefusedBeforeAnyDownload) {
  const oci::Descriptor layer = m_published->manifest.layers.front();
  struct Case {
    std::string tag;
    std::function<void(oci::Manifest&)> change;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"no-type",
       [](oci::Manifest& m) { m.artifact_type.reset(); },
       "its artifactType is '', expected 'application/vnd.lume-unlock.shim-bundle.v1'"},
      {"other-type",
       [](oci::Manifest& m) { m.artifact_type = "application/vnd.example.thing.v1"; },
       "its artifactType is 'application/vnd.example.thing.v1', expected "
       "'application/vnd.lume-unlock.shim-bundle.v1'"},
      {"config-type",
       [](oci::Manifest& m) { m.config->media_type = oci::media_type::oci_config; },
       "its config has media type 'application/vnd.oci.image.config.v1+json', expected "
       "'application/vnd.lume-unlock.shim-bundle.config.v1+json'"},
      {"two-layers",
       [&](oci::Manifest& m) { m.layers.push_back(layer); },
       "it has 2 layers, expected exactly one (the bundle archive)"},
      {"layer-type",
       [](oci::Manifest& m) { m.layers[0].media_type = oci::media_type::oci_layer_tar_gzip; },
       "its layer has media type 'application/vnd.oci.image.layer.v1.tar+gzip', expected "
       "'application/vnd.lume-unlock.shim-bundle.layer.v1.tar+gzip'"},
  };
  for (const auto& c : cases) {
    oci::Manifest changed = m_published->manifest;
    c.change(changed);
    const auto ref = oci::parse_reference(push_manifest(changed, c.tag)).value();
    oci::RegistryClient counting(m_registry->client_options());
    auto fetched = fetch_bundle(counting, ref, m_work.path());
    ASSERT_FALSE(fetched.ok()) << c.tag;
    EXPECT_EQ(fetched.error().category(), ErrorCategory::registry) << c.tag;
    EXPECT_EQ(fetched.error().message(), "shim bundle '" + ref.str() + "': " + c.why) << c.tag;
    EXPECT_EQ(fetched.error().hint(),
              "publish the bundle with 'lume-unlock bundle push ARCHIVE REF' and pin the "
              "reference it prints")
        << c.tag;
    EXPECT_EQ(counting.request_count(), 1u) << c.tag << ": only the manifest is fetched";
  }
  // A Lume VM image is not a shim bundle either.
  auto image = oci::parse_reference(m_registry->host() + "/acme/tahoe:latest").value();
  auto seeded = test::seed_lume_image(m_client, image);
  ASSERT_TRUE(seeded.ok()) << seeded.error().message();
  auto fetched = fetch_bundle(m_client, image.pinned(seeded.value().digest), m_work.path());
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::registry);
  EXPECT_TRUE(entries_of(m_work.path()).empty());
}

/// The "bundle" check of `lume-unlock --json doctor --bundle BUNDLE` (Lume is not needed). The
/// recipe installs from an IPSW, so the registry check never builds a client of its own.
/// `registry_ca` (empty: none) is given as --registry-ca; `recipe_ca`, when set, is copied next
/// to the recipe and named by its registry.ca instead.
nlohmann::json doctor_bundle_check(const std::string& bundle,
                                   const std::string& registry_ca,
                                   const std::string& recipe_ca = "") {
  test::TempDir state("bundle-fetch-state");
  const std::string recipe = state / "ipsw.yaml";
  std::string text = "source: {ipsw: latest}\n";
  if (!recipe_ca.empty()) {
    fs::copy_file(recipe_ca, state / "registry-ca.pem");
    text += "registry: {ca: registry-ca.pem}\n";
  }
  EXPECT_TRUE(util::write_file_atomic(recipe, text, 0644).ok());
  std::vector<std::string> args = {
      "--json", "--lume-url", "http://127.0.0.1:1", "--state-dir", state.path(), "doctor"};
  if (!registry_ca.empty()) {
    args.insert(args.end(), {"--registry-ca", registry_ca});
  }
  args.insert(args.end(), {"--recipe", recipe, "--bundle", bundle});
  auto doctor = test::run_lume_unlock(args);
  const nlohmann::json report = nlohmann::json::parse(doctor.out, nullptr, false);
  if (report.is_object() && report.contains("checks")) {
    for (const auto& check : report["checks"]) {
      if (check["name"] == "bundle") {
        return check;
      }
    }
  }
  ADD_FAILURE() << "no bundle check in: " << doctor.out << doctor.err;
  return nlohmann::json::object();
}

// A registry on a private CA: the recipe's registry.ca is trusted like --registry-ca, and
// without either the TLS check fails and says which options name a CA.
TEST_F(BundleFetch, TheRecipesRegistryCaIsTrusted) {
  unsetenv("SSL_CERT_FILE");
  const nlohmann::json untrusted = doctor_bundle_check(m_pinned, "");
  EXPECT_EQ(untrusted.value("status", ""), "fail") << untrusted;
  EXPECT_NE(untrusted.value("fix", "").find("--registry-ca FILE"), std::string::npos) << untrusted;
  const nlohmann::json from_recipe = doctor_bundle_check(m_pinned, "", m_registry->ca_file());
  EXPECT_NE(from_recipe.value("status", ""), "fail") << from_recipe;
  EXPECT_NE(from_recipe.value("detail", "").find("files verified"), std::string::npos)
      << from_recipe;
}

TEST_F(BundleFetch, DoctorReadsCredentialsOnlyForARegistryBundle) {
  ASSERT_TRUE(util::write_file_atomic(m_files / "config.json", "{not json", 0600).ok());
  setenv("DOCKER_CONFIG", m_files.path().c_str(), 1);
  const nlohmann::json local = doctor_bundle_check(SHIM_BUNDLE_DIR, m_registry->ca_file());
  const nlohmann::json remote = doctor_bundle_check(m_pinned, m_registry->ca_file());
  unsetenv("DOCKER_CONFIG");
  EXPECT_NE(local.value("status", ""), "fail") << local;
  EXPECT_EQ(remote.value("status", ""), "fail") << remote;
  EXPECT_NE(remote.value("detail", "").find(m_files / "config.json"), std::string::npos) << remote;
}

// The command line: --bundle takes REF@sha256:… (doctor loads it like create does).
TEST_F(BundleFetch, CommandsTakeAPinnedReferenceAndExitWithTheRightCode) {
  const nlohmann::json bundle_check = doctor_bundle_check(m_pinned, m_registry->ca_file());
  EXPECT_NE(bundle_check.value("status", ""), "fail") << bundle_check;
  EXPECT_NE(bundle_check.value("detail", "").find(m_pinned + " (--bundle): version "),
            std::string::npos)
      << bundle_check;
  EXPECT_NE(bundle_check.value("detail", "").find("files verified"), std::string::npos);

  // create fails on the bundle before it talks to Lume: the exit code is the bundle's.
  const std::string wrong =
      m_tagged.repository_path() + "@" + oci::Digest::of_bytes("no such manifest").str();
  auto missing = test::run_lume_unlock({"create", "vm1", "--bundle", wrong});
  EXPECT_EQ(missing.exit_code, 4) << missing.err;
  EXPECT_EQ(
      missing.err.rfind("lume-unlock: error: --bundle: cannot get manifest '" + wrong + "'", 0), 0u)
      << missing.err;

  auto tag_only = test::run_lume_unlock({"create", "vm1", "--bundle", m_tagged.str()});
  EXPECT_EQ(tag_only.exit_code, 2) << tag_only.err;
  EXPECT_EQ(tag_only.err,
            "lume-unlock: error: shim bundle '" + m_tagged.str() +
                "' (from --bundle): it is not a local path, and a registry reference must be "
                "pinned by digest\nhint: pin it by digest: lume-unlock resolve " +
                m_tagged.str() + " prints it; write " + m_tagged.str() + "@sha256:<hex>\n");
}

} // namespace
} // namespace lume_unlock::transfer
