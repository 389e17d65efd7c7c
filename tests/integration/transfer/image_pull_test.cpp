// transfer::pull_image against a real registry (docker-registry on loopback) and a scripted
// Lume (FakeLume below): the resolve / pull / compare logic, case by case.
#include "oci/manifest.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/registry_server.hpp"
#include "support/scripted_lume.hpp"
#include "support/temp_dir.hpp"
#include "transfer/image_pull.hpp"
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace lume_unlock::transfer {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// A Lume that "pulls" by writing <home>/<vm>/.manifest-digest after a few polls, with `home`
/// its one (default) location. find(), config() and pull_start() are used by pull_image.
class FakeLume : public test::LumeApiStub {
public:
  explicit FakeLume(std::string home) : m_home(std::move(home)) {}

  std::string writes_digest;             ///< what the pull writes to .manifest-digest
  std::optional<std::string> fails_with; ///< the pull fails: sticky "Pull failed for …"
  std::optional<std::string> sticky;     ///< find() answers this sticky failure from the start
  std::vector<lume::PullRequest> pulls;
  int finds = 0;

  void add_vm(const std::string& name, const std::optional<std::string>& digest) {
    fs::create_directories(m_home + "/" + name);
    std::ofstream(m_home + "/" + name + "/config.json") << "{}";
    if (digest) {
      std::ofstream(m_home + "/" + name + "/.manifest-digest") << *digest;
    }
    m_vms.insert(name);
  }

  Result<std::optional<lume::VmState>> find(const lume::VmRef& vm) override {
    ++finds;
    if (sticky) {
      return Error(ErrorCategory::lume_api,
                   "get of VM '" + vm.name + "'",
                   "Lume answered HTTP 400: Pull failed for '" + vm.name + "': " + *sticky);
    }
    if (m_pulling.count(vm.name)) {
      if (m_polls++ < 2) {
        return std::optional<lume::VmState>(lume::PullProgress{vm.name, 40.0 * m_polls});
      }
      m_pulling.erase(vm.name);
      if (fails_with) {
        sticky = fails_with;
        return find(vm);
      }
      add_vm(vm.name, writes_digest);
    }
    if (m_vms.count(vm.name)) {
      lume::VmDetails d;
      d.name = vm.name;
      d.status = lume::VmStatus::stopped;
      d.status_text = "stopped";
      d.location_name = "home";
      return std::optional<lume::VmState>(d);
    }
    return std::optional<lume::VmState>();
  }
  Result<lume::LumeConfig> config() override {
    lume::LumeConfig c;
    c.vm_locations = {{"home", m_home}};
    c.default_location_name = "home";
    return c;
  }
  Status pull_start(const lume::PullRequest& request) override {
    pulls.push_back(request);
    sticky.reset(); // a new pull clears the sticky failure (§3.3)
    m_pulling.insert(request.name);
    return ok_status();
  }

private:
  std::string m_home;
  std::set<std::string> m_vms;
  std::set<std::string> m_pulling;
  int m_polls = 0;
};

class ImagePullTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why_not;
    m_registry = test::RegistryServer::start(why_not);
    LUME_UNLOCK_REQUIRE(m_registry != nullptr, why_not);
    m_client = oci::RegistryClient(m_registry->client_options());
    auto image = test::seed_lume_image(m_client, ref(":latest"));
    ASSERT_TRUE(image.ok()) << image.error().message();
    m_digest = image.value().digest.str();
    m_manifest = image.value().manifest_bytes;
  }

  oci::Reference ref(const std::string& suffix) {
    return oci::parse_reference(m_registry->host() + "/trycua/macos-tahoe-cua" + suffix).value();
  }

  ImagePullRequest request(const oci::Reference& r) {
    ImagePullRequest q{r, "demo", 10s, {}, {}};
    q.progress = [this](const util::ProgressEvent& e) { m_events.push_back(e); };
    return q;
  }

  std::string vm_file(const std::string& name) { return m_home / ("demo/" + name); }

  std::unique_ptr<test::RegistryServer> m_registry;
  oci::RegistryClient m_client;
  test::TempDir m_home{"image-pull-home"};
  std::string m_digest;
  std::string m_manifest;
  std::vector<util::ProgressEvent> m_events;
};

TEST_F(ImagePullTest, TagIsResolvedPulledByNameTagAndComparedWithTheManifestDigest) {
  FakeLume lume(m_home.path());
  lume.writes_digest = m_digest;
  auto pulled = pull_image(lume, m_client, request(ref(":latest")));
  ASSERT_TRUE(pulled.ok()) << pulled.error().message();
  EXPECT_EQ(pulled.value().reference, m_registry->host() + "/trycua/macos-tahoe-cua:latest");
  EXPECT_EQ(pulled.value().digest.str(), m_digest);
  EXPECT_EQ(pulled.value().lume_manifest_digest, m_digest);
  EXPECT_TRUE(pulled.value().changed);
  ASSERT_EQ(lume.pulls.size(), 1u);
  EXPECT_EQ(lume::to_json(lume.pulls[0]),
            nlohmann::json({{"image", "macos-tahoe-cua:latest"},
                            {"name", "demo"},
                            {"registry", m_registry->host()},
                            {"organization", "trycua"}}));
  // downloadProgress reached the callback as percentages.
  std::vector<std::uint64_t> percents;
  for (const auto& e : m_events) {
    if (e.unit == "%" && e.done) {
      percents.push_back(*e.done);
    }
  }
  EXPECT_EQ(percents, (std::vector<std::uint64_t>{40, 80}));
  EXPECT_TRUE(m_events.back().finished);
}

TEST_F(ImagePullTest, MovedTagIsARegistryErrorAndTheVmIsLeftInPlace) {
  FakeLume lume(m_home.path());
  const std::string other = oci::Digest::of_bytes("another manifest").str();
  lume.writes_digest = other;
  auto pulled = pull_image(lume, m_client, request(ref(":latest")));
  ASSERT_FALSE(pulled.ok());
  EXPECT_EQ(pulled.error().category(), ErrorCategory::registry);
  EXPECT_EQ(pulled.error().message(),
            "pull of '" + m_registry->host() +
                "/trycua/macos-tahoe-cua:latest' into VM 'demo': "
                "tag moved during pull: resolved " +
                m_digest + " but Lume pulled " + other);
  EXPECT_NE(pulled.error().hint().find("`skopeo copy --preserve-digests docker://" +
                                       m_registry->host() + "/trycua/macos-tahoe-cua@" + m_digest +
                                       " docker://<your-registry>/"),
            std::string::npos)
      << pulled.error().hint();
  EXPECT_EQ(util::read_file(vm_file(".manifest-digest")).value(), other);
  EXPECT_TRUE(fs::exists(vm_file("config.json")));
}

TEST_F(ImagePullTest, ExistingVmWithTheSameDigestIsNotPulledAgain) {
  FakeLume lume(m_home.path());
  lume.add_vm("demo", m_digest);
  auto pulled = pull_image(lume, m_client, request(ref(":latest")));
  ASSERT_TRUE(pulled.ok()) << pulled.error().message();
  EXPECT_FALSE(pulled.value().changed);
  EXPECT_EQ(pulled.value().lume_manifest_digest, m_digest);
  EXPECT_TRUE(lume.pulls.empty());
}

TEST_F(ImagePullTest, ExistingVmFromAnotherDigestOrNoneIsRefusedWithoutPulling) {
  struct Case {
    const char* name;
    std::optional<std::string> digest;
    std::string why;
  };
  const std::string other = oci::Digest::of_bytes("x").str();
  const std::vector<Case> cases = {
      {"other digest",
       other,
       "VM 'demo' already exists and was pulled from " + other + ", not " + m_digest},
      {"no digest", std::nullopt, "VM 'demo' already exists and was not pulled from a registry"},
  };
  for (const auto& c : cases) {
    test::TempDir home("image-pull-existing");
    FakeLume lume(home.path());
    lume.add_vm("demo", c.digest);
    ImagePullRequest q = request(ref(":latest"));
    auto pulled = pull_image(lume, m_client, q);
    ASSERT_FALSE(pulled.ok()) << c.name;
    EXPECT_EQ(pulled.error().category(), ErrorCategory::usage) << c.name;
    EXPECT_EQ(pulled.error().why(), c.why) << c.name;
    EXPECT_TRUE(lume.pulls.empty()) << c.name;
  }
}

TEST_F(ImagePullTest, DigestOnlyReferenceIsPulledThroughItsSha256Tag) {
  const auto digest = oci::Digest::parse(m_digest).value();
  oci::Reference by_digest = ref("@" + m_digest);
  FakeLume lume(m_home.path());
  lume.writes_digest = m_digest;

  // Without the immutable tag: a clear registry error, no pull.
  auto missing = pull_image(lume, m_client, request(by_digest));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().category(), ErrorCategory::registry);
  EXPECT_NE(missing.error().why().find("the immutable tag '" + m_registry->host() +
                                       "/trycua/macos-tahoe-cua:sha256-" + digest.hex() +
                                       "' is not available"),
            std::string::npos)
      << missing.error().why();
  EXPECT_NE(missing.error().hint().find("push the image with the tag 'sha256-" + digest.hex()),
            std::string::npos)
      << missing.error().hint();
  EXPECT_TRUE(lume.pulls.empty());

  // With it: pulled as name:sha256-<hex>.
  ASSERT_TRUE(
      m_client
          .push_manifest(ref(":sha256-" + digest.hex()), m_manifest, oci::media_type::oci_manifest)
          .ok());
  auto pulled = pull_image(lume, m_client, request(by_digest));
  ASSERT_TRUE(pulled.ok()) << pulled.error().message();
  ASSERT_EQ(lume.pulls.size(), 1u);
  EXPECT_EQ(lume.pulls[0].image, "macos-tahoe-cua:sha256-" + digest.hex());
  EXPECT_EQ(pulled.value().reference,
            m_registry->host() + "/trycua/macos-tahoe-cua:sha256-" + digest.hex());
  EXPECT_EQ(pulled.value().digest, digest);
}

TEST_F(ImagePullTest, ATagPinnedByDigestIsPulledThroughItsTagWhileTheTagStillNamesIt) {
  // "repo:latest@sha256:…" as a lock file pins an upstream image, which has no sha256-<hex> tag.
  const auto digest = oci::Digest::parse(m_digest).value();
  FakeLume lume(m_home.path());
  lume.writes_digest = m_digest;
  auto pulled = pull_image(lume, m_client, request(ref(":latest@" + m_digest)));
  ASSERT_TRUE(pulled.ok()) << pulled.error().message();
  ASSERT_EQ(lume.pulls.size(), 1u);
  EXPECT_EQ(lume.pulls[0].image, "macos-tahoe-cua:latest");
  EXPECT_EQ(pulled.value().digest, digest);

  // Once the tag names another image, only the immutable tag could serve the pinned digest.
  auto other = test::seed_lume_image(m_client, ref(":latest"), [] {
    test::LumeImageSpec s;
    s.seed = 7;
    return s;
  }());
  ASSERT_TRUE(other.ok());
  FakeLume fresh(m_home.path() + "/fresh");
  auto moved = pull_image(fresh, m_client, request(ref(":latest@" + m_digest)));
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.error().why().find("the immutable tag '" + m_registry->host() +
                                     "/trycua/macos-tahoe-cua:sha256-" + digest.hex() +
                                     "' is not available"),
            std::string::npos)
      << moved.error().why();
  // It says the tag moved, and how to keep the pinned bytes: by digest, into one's own registry.
  EXPECT_EQ(moved.error().why().rfind("the tag '" + m_registry->host() +
                                          "/trycua/macos-tahoe-cua:latest' moved: it names " +
                                          other.value().digest.str() + ", not the pinned " +
                                          m_digest + ", and the immutable tag",
                                      0),
            0u)
      << moved.error().why();
  EXPECT_EQ(moved.error().hint(),
            "keep the published bytes while " + m_registry->host() +
                " still serves them by digest: copy them into a registry you control, `skopeo "
                "copy --preserve-digests docker://" +
                m_registry->host() + "/trycua/macos-tahoe-cua@" + m_digest +
                " docker://<your-registry>/<org>/macos-tahoe-cua:sha256-" + digest.hex() +
                "`, and point the recipe's source.image there "
                "(<your-registry>/<org>/macos-tahoe-cua@" +
                m_digest + "; registry.ca for a private CA)");
  EXPECT_TRUE(fresh.pulls.empty());
}

TEST_F(ImagePullTest, Sha256TagPointingElsewhereIsRefused) {
  const auto digest = oci::Digest::parse(m_digest).value();
  auto other = test::seed_lume_image(m_client, ref(":other"), [] {
    test::LumeImageSpec s;
    s.seed = 9;
    return s;
  }());
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(m_client
                  .push_manifest(ref(":sha256-" + digest.hex()),
                                 other.value().manifest_bytes,
                                 oci::media_type::oci_manifest)
                  .ok());
  FakeLume lume(m_home.path());
  auto pulled = pull_image(lume, m_client, request(ref("@" + m_digest)));
  ASSERT_FALSE(pulled.ok());
  EXPECT_EQ(pulled.error().why(),
            "the tag '" + m_registry->host() + "/trycua/macos-tahoe-cua:sha256-" + digest.hex() +
                "' points at " + other.value().digest.str() + ", not at " + m_digest);
  EXPECT_TRUE(lume.pulls.empty());
}

TEST_F(ImagePullTest, LumePullFailureCarriesLumesMessage) {
  FakeLume lume(m_home.path());
  lume.fails_with = "Failed to fetch image manifest from registry.";
  auto pulled = pull_image(lume, m_client, request(ref(":latest")));
  ASSERT_FALSE(pulled.ok());
  EXPECT_EQ(pulled.error().category(), ErrorCategory::lume_api);
  EXPECT_NE(pulled.error().message().find(
                "Pull failed for 'demo': Failed to fetch image manifest from registry."),
            std::string::npos)
      << pulled.error().message();
}

TEST_F(ImagePullTest, EarlierStickyFailureDoesNotHideAFreeName) {
  FakeLume lume(m_home.path());
  lume.sticky = "Failed to fetch image manifest from registry.";
  lume.writes_digest = m_digest;
  auto pulled = pull_image(lume, m_client, request(ref(":latest")));
  ASSERT_TRUE(pulled.ok()) << pulled.error().message();
  EXPECT_EQ(lume.pulls.size(), 1u);
}

TEST_F(ImagePullTest, UnknownTagAndSingleComponentRepositoryFailBeforeLume) {
  FakeLume lume(m_home.path());
  auto unknown = pull_image(lume, m_client, request(ref(":nope")));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().category(), ErrorCategory::registry);
  auto image =
      test::seed_lume_image(m_client, oci::parse_reference(m_registry->host() + "/solo:1").value());
  ASSERT_TRUE(image.ok());
  auto solo = pull_image(
      lume, m_client, request(oci::parse_reference(m_registry->host() + "/solo:1").value()));
  ASSERT_FALSE(solo.ok());
  EXPECT_EQ(solo.error().category(), ErrorCategory::usage);
  EXPECT_EQ(solo.error().why(),
            "Lume uses only <organization>/<name> repositories, and 'solo' has no organization");
  EXPECT_EQ(lume.finds, 0);
  EXPECT_TRUE(lume.pulls.empty());
}

} // namespace
} // namespace lume_unlock::transfer
