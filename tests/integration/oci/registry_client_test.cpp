// The registry client against a real registry (Debian's docker-registry, CNCF distribution 2.8)
// on loopback, with every digest cross-checked by an independent client (skopeo).
#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

namespace lume_unlock::oci {
namespace {

using test::RegistryServer;

class RegistryClientTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() { s_server = RegistryServer::start(s_why_not).release(); }
  static void TearDownTestSuite() {
    delete s_server;
    s_server = nullptr;
  }
  void SetUp() override { LUME_UNLOCK_REQUIRE(s_server != nullptr, s_why_not); }

  Reference ref(const std::string& path) const {
    return parse_reference(s_server->host() + "/" + path).value_or_throw();
  }
  static std::string skopeo_target(const Reference& r) { return "docker://" + r.str(); }

  static RegistryServer* s_server;
  static std::string s_why_not;
};
RegistryServer* RegistryClientTest::s_server = nullptr;
std::string RegistryClientTest::s_why_not;

const char* const k_skopeo = "/usr/bin/skopeo";
bool have_skopeo() {
  return access(k_skopeo, X_OK) == 0;
}

std::string file_bytes(const std::string& path) {
  return util::read_file(path).value_or_throw();
}

TEST_F(RegistryClientTest, SeededLumeImageResolvesToTheDigestSkopeoSees) {
  LUME_UNLOCK_REQUIRE(have_skopeo(), "skopeo is not installed (run scripts/bootstrap)");
  RegistryClient client(s_server->client_options());
  const Reference tagged = ref("lume/seeded:v1");
  auto seeded = test::seed_lume_image(client, tagged);
  ASSERT_TRUE(seeded.ok()) << seeded.error().message();

  auto fetched = client.get_manifest(tagged);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().digest, seeded.value().digest);
  EXPECT_EQ(fetched.value().bytes, seeded.value().manifest_bytes);
  EXPECT_EQ(fetched.value().media_type, media_type::oci_manifest);
  EXPECT_EQ(fetched.value().manifest, seeded.value().manifest);
  ASSERT_EQ(fetched.value().manifest.layers.size(), 2u);
  EXPECT_EQ(fetched.value().manifest.layers[1].annotations.at(annotation::lume_part_total), "1");

  // skopeo's raw bytes are our bytes, and its digest of them is ours.
  auto raw = test::run_command(
      {k_skopeo, "inspect", "--raw", s_server->skopeo_trust(), skopeo_target(tagged)});
  ASSERT_EQ(raw.exit_status, 0) << raw.stderr_text;
  EXPECT_EQ(raw.stdout_text, seeded.value().manifest_bytes);
  test::TempDir dir;
  { std::ofstream(dir / "manifest.json", std::ios::binary) << raw.stdout_text; }
  auto digest = test::run_command({k_skopeo, "manifest-digest", dir / "manifest.json"});
  ASSERT_EQ(digest.exit_status, 0) << digest.stderr_text;
  EXPECT_EQ(digest.stdout_text, seeded.value().digest.str() + "\n");
  // Plain `skopeo inspect` refuses Lume images ("unsupported image-specific operation on
  // artifact with type application/vnd.trycua.lume.config.v1+json"); its Digest field is
  // cross-checked on a plain OCI image in the next test.
}

TEST_F(RegistryClientTest, PlainOciImageDigestEqualsSkopeoInspectDigest) {
  LUME_UNLOCK_REQUIRE(have_skopeo(), "skopeo is not installed (run scripts/bootstrap)");
  RegistryClient client(s_server->client_options());
  const Reference tagged = ref("plain/image:1.0");
  const std::string config =
      R"({"architecture":"arm64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}})";
  auto config_blob = client.push_blob_bytes(tagged, config, media_type::oci_config);
  ASSERT_TRUE(config_blob.ok()) << config_blob.error().message();
  Manifest m;
  m.media_type = media_type::oci_manifest;
  m.config = config_blob.value();
  auto pushed = client.push_manifest(tagged, serialize(m), media_type::oci_manifest);
  ASSERT_TRUE(pushed.ok()) << pushed.error().message();

  auto inspect =
      test::run_command({k_skopeo, "inspect", s_server->skopeo_trust(), skopeo_target(tagged)});
  ASSERT_EQ(inspect.exit_status, 0) << inspect.stderr_text;
  EXPECT_EQ(nlohmann::json::parse(inspect.stdout_text)["Digest"], pushed.value().str());
  auto fetched = client.get_manifest(tagged);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().digest, pushed.value());
}

TEST_F(RegistryClientTest, HeadAndByDigestGetAgreeWithTheTag) {
  RegistryClient client(s_server->client_options());
  const Reference tagged = ref("lume/head:v2");
  test::LumeImageSpec spec;
  spec.seed = 2;
  auto seeded = test::seed_lume_image(client, tagged, spec);
  ASSERT_TRUE(seeded.ok()) << seeded.error().message();
  auto head = client.head_manifest(tagged);
  ASSERT_TRUE(head.ok()) << head.error().message();
  EXPECT_EQ(head.value().digest, seeded.value().digest);
  EXPECT_EQ(head.value().media_type, media_type::oci_manifest);
  EXPECT_EQ(head.value().size, seeded.value().manifest_bytes.size());
  auto by_digest = client.get_manifest(tagged.pinned(seeded.value().digest));
  ASSERT_TRUE(by_digest.ok()) << by_digest.error().message();
  EXPECT_EQ(by_digest.value().bytes, seeded.value().manifest_bytes);
}

TEST_F(RegistryClientTest, DownloadsEveryBlobVerifiedAndMatchingSkopeo) {
  LUME_UNLOCK_REQUIRE(have_skopeo(), "skopeo is not installed (run scripts/bootstrap)");
  RegistryClient client(s_server->client_options());
  const Reference tagged = ref("lume/blobs:v1");
  test::LumeImageSpec spec;
  spec.seed = 3;
  spec.chunk_bytes = 1024 * 1024; // four disk parts
  auto seeded = test::seed_lume_image(client, tagged, spec);
  ASSERT_TRUE(seeded.ok()) << seeded.error().message();
  ASSERT_EQ(seeded.value().manifest.layers.size(), 5u);

  test::TempDir ours;
  test::TempDir theirs;
  auto copy = test::run_command({k_skopeo,
                                 "copy",
                                 s_server->skopeo_trust("src-"),
                                 skopeo_target(tagged),
                                 "dir:" + (theirs / "out")});
  ASSERT_EQ(copy.exit_status, 0) << copy.stderr_text;
  std::vector<Descriptor> blobs = seeded.value().manifest.layers;
  blobs.push_back(*seeded.value().manifest.config);
  for (const auto& blob : blobs) {
    const std::string path = ours / blob.digest.hex();
    auto status = client.download_blob(tagged, blob, path);
    ASSERT_TRUE(status.ok()) << status.error().message();
    EXPECT_EQ(util::sha256_file_hex(path).value(), blob.digest.hex());
    EXPECT_EQ(file_bytes(path), file_bytes(theirs / ("out/" + blob.digest.hex())))
        << blob.digest.str();
  }
  EXPECT_EQ(file_bytes(ours / seeded.value().manifest.layers[0].digest.hex()),
            seeded.value().nvram);
  EXPECT_EQ(file_bytes(ours / seeded.value().manifest.layers[2].digest.hex()),
            seeded.value().disk_chunks[1]);
}

TEST_F(RegistryClientTest, ChunkedUploadRoundTripsThroughPatch) {
  RegistryClientOptions options = s_server->client_options();
  options.chunked_upload_threshold = 1024 * 1024;
  options.upload_chunk_size = 256 * 1024;
  RegistryClient client(options);
  test::TempDir dir;
  std::string payload(3 * 1024 * 1024 + 17, '\0');
  std::mt19937 rng(7);
  for (auto& c : payload) {
    c = static_cast<char>(rng());
  }
  ASSERT_TRUE(util::write_file_atomic(dir / "blob", payload).ok());
  const Reference repo = ref("chunked/blob:x");
  const std::uint64_t before = client.request_count();
  auto pushed = client.push_blob_file(repo, dir / "blob", media_type::octet_stream);
  ASSERT_TRUE(pushed.ok()) << pushed.error().message();
  // POST, 13 PATCHes of 256 KiB hashed while sent, PUT with the digest, HEAD cross-check.
  EXPECT_EQ(client.request_count() - before, 16u);
  EXPECT_EQ(pushed.value().digest, Digest::of_bytes(payload));
  EXPECT_EQ(pushed.value().size, payload.size());
  auto size = client.stat_blob(repo, pushed.value().digest);
  ASSERT_TRUE(size.ok()) << size.error().message();
  EXPECT_EQ(size.value(), std::optional<std::uint64_t>(payload.size()));
  ASSERT_TRUE(client.download_blob(repo, pushed.value(), dir / "back").ok());
  EXPECT_EQ(file_bytes(dir / "back"), payload);
}

TEST_F(RegistryClientTest, MonolithicUploadIsPostThenPutAndSkipsKnownBlobs) {
  RegistryClient client(s_server->client_options());
  const Reference repo = ref("mono/blob:x");
  const std::string payload = "a small blob";
  std::uint64_t before = client.request_count();
  auto first = client.push_blob_bytes(repo, payload, media_type::octet_stream);
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_EQ(client.request_count() - before, 4u); // HEAD, POST, PUT, HEAD
  before = client.request_count();
  auto second = client.push_blob_bytes(repo, payload, media_type::octet_stream);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(client.request_count() - before, 1u); // the registry has it: HEAD only
  EXPECT_EQ(second.value(), first.value());
  auto missing = client.stat_blob(repo, Digest::of_bytes("never pushed"));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing.value(), std::nullopt);
}

TEST_F(RegistryClientTest, FileWithoutAKnownDigestIsHashedWhileSent) {
  RegistryClient client(s_server->client_options());
  test::TempDir dir;
  const std::string payload(300000, 'q');
  ASSERT_TRUE(util::write_file_atomic(dir / "blob", payload).ok());
  const Reference repo = ref("onepass/blob:x");
  const std::uint64_t before = client.request_count();
  auto pushed = client.push_blob_file(repo, dir / "blob", media_type::lume_nvram);
  ASSERT_TRUE(pushed.ok()) << pushed.error().message();
  EXPECT_EQ(client.request_count() - before, 4u); // POST, PATCH, PUT with the digest, HEAD
  EXPECT_EQ(pushed.value().digest, Digest::of_bytes(payload));
  EXPECT_EQ(pushed.value().media_type, media_type::lume_nvram);
  // With the digest known, a second push of the same file is a HEAD only.
  const std::uint64_t again = client.request_count();
  ASSERT_TRUE(
      client.push_blob_file(repo, dir / "blob", media_type::lume_nvram, pushed.value().digest)
          .ok());
  EXPECT_EQ(client.request_count() - again, 1u);
}

TEST_F(RegistryClientTest, KnownDigestThatDoesNotMatchTheFileIsRejectedByTheRegistry) {
  RegistryClient client(s_server->client_options());
  test::TempDir dir;
  ASSERT_TRUE(util::write_file_atomic(dir / "blob", "actual bytes").ok());
  const Reference repo = ref("wrong/blob:x");
  const Digest claimed = Digest::of_bytes("other bytes");
  auto pushed = client.push_blob_file(repo, dir / "blob", media_type::octet_stream, claimed);
  ASSERT_FALSE(pushed.ok());
  EXPECT_EQ(pushed.error().category(), ErrorCategory::registry);
  EXPECT_EQ(pushed.error().message().rfind("cannot upload blob '" + claimed.str() + "' to '" +
                                               repo.repository_path() + "': PUT https://" +
                                               s_server->host() + "/v2/wrong/blob/blobs/uploads/",
                                           0),
            0u)
      << pushed.error().message();
  EXPECT_NE(
      pushed.error().message().find(
          "answered HTTP 400: DIGEST_INVALID: provided digest did not match uploaded content"),
      std::string::npos)
      << pushed.error().message();
}

TEST_F(RegistryClientTest, MissingTagIsARegistryErrorWithTheRegistrysMessage) {
  RegistryClient client(s_server->client_options());
  test::LumeImageSpec spec;
  ASSERT_TRUE(test::seed_lume_image(client, ref("lume/tags:v1"), spec).ok());
  auto missing = client.get_manifest(ref("lume/tags:nope"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().category(), ErrorCategory::registry);
  EXPECT_EQ(
      missing.error().message(),
      "cannot get manifest '" + s_server->host() + "/lume/tags:nope': GET https://" +
          s_server->host() +
          "/v2/lume/tags/manifests/nope answered HTTP 404: MANIFEST_UNKNOWN: manifest unknown");
}

TEST_F(RegistryClientTest, ManifestReferencingMissingBlobsIsRejected) {
  RegistryClient client(s_server->client_options());
  Manifest m;
  m.media_type = media_type::oci_manifest;
  Descriptor config;
  config.media_type = media_type::lume_config;
  config.digest = Digest::of_bytes("not uploaded");
  config.size = 12;
  m.config = config;
  const Reference tagged = ref("lume/broken:v1");
  auto pushed = client.push_manifest(tagged, serialize(m), media_type::oci_manifest);
  ASSERT_FALSE(pushed.ok());
  EXPECT_EQ(pushed.error().message(),
            "cannot push manifest '" + tagged.str() + "': PUT https://" + s_server->host() +
                "/v2/lume/broken/manifests/v1 answered HTTP 400: MANIFEST_BLOB_UNKNOWN: blob "
                "unknown to registry");
}

// Issue 27: an IPv6 registry host parses, prints back the same and the URL built from it works
// with libcurl against a real docker-registry listening on [::1].
/// Whether this machine has the IPv6 loopback (some containers run without it).
bool have_ipv6_loopback() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) {
    return false;
  }
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return bound;
}

TEST(RegistryClientIpv6, ABracketedLoopbackRegistryServesAnImage) {
  if (!have_ipv6_loopback()) {
    GTEST_SKIP() << "this machine has no IPv6 loopback (::1) to listen on";
  }
  std::string why_not;
  auto server = RegistryServer::start(why_not,
                                      RegistryServer::Transport::tls,
                                      RegistryServer::Access::open,
                                      RegistryServer::Loopback::ipv6);
  LUME_UNLOCK_REQUIRE(server != nullptr, "no docker-registry on [::1]: " + why_not);
  ASSERT_EQ(server->host().rfind("[::1]:", 0), 0u) << server->host();
  const std::string text = server->host() + "/lume/v6:1";
  auto tagged = oci::parse_reference(text);
  ASSERT_TRUE(tagged.ok()) << tagged.error().message();
  EXPECT_EQ(tagged.value().registry, server->host());
  EXPECT_EQ(tagged.value().str(), text);

  RegistryClient client(server->client_options());
  auto seeded = test::seed_lume_image(client, tagged.value());
  ASSERT_TRUE(seeded.ok()) << seeded.error().message();
  auto fetched = client.get_manifest(tagged.value());
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().digest, seeded.value().digest);
}

} // namespace
} // namespace lume_unlock::oci
