// oci:// install sources against a real docker-registry on TLS: a model pushed as a blob is
// fetched by its digest into the cache, and a digest the registry lacks is a registry error.
#include "fetch/fetch.hpp"
#include "support/loopback_http_server.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <vector>

namespace lume_unlock::fetch {
namespace {

class OciArtifactFetch : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    server = test::RegistryServer::start(why);
    if (!server) {
      GTEST_SKIP() << why;
    }
    registry = std::make_unique<oci::RegistryClient>(server->client_options());
    repo = oci::parse_reference(server->host() + "/models/tiny:v1").value();
  }

  std::unique_ptr<test::RegistryServer> server;
  std::unique_ptr<oci::RegistryClient> registry;
  oci::Reference repo;
  test::TempDir dir{"lume-unlock-oci-fetch"};
  BlobCache cache{dir.path() + "/cache"};
  util::HttpClient http;
};

TEST_F(OciArtifactFetch, ABlobPinnedByDigestIsFetchedOnceIntoTheCache) {
  const std::string model(150000, 'q');
  auto pushed = registry->push_blob_bytes(repo, model, "application/octet-stream");
  ASSERT_TRUE(pushed.ok()) << pushed.error().message();
  FetchRequest request;
  request.source =
      parse_oci_source("oci://" + server->host() + "/models/tiny@" + pushed.value().digest.str())
          .value();
  request.label = "model.gguf";
  FetchServices services{http, registry.get(), {}, {}, {}};
  auto fetched = fetch_artifact(request, cache, services);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(model));
  EXPECT_EQ(fetched.value().size, model.size());
  EXPECT_EQ(fetched.value().path, cache.blob_path(util::sha256_hex(model)));
  EXPECT_FALSE(fetched.value().from_cache);

  auto again = fetch_artifact(request, cache, services);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE(again.value().from_cache);
  EXPECT_EQ(again.value().network_bytes, 0u);
}

TEST_F(OciArtifactFetch, ADigestTheRegistryLacksIsARegistryErrorAndCachesNothing) {
  FetchRequest request;
  request.source =
      parse_oci_source("oci://" + server->host() + "/models/tiny@sha256:" + std::string(64, 'a'))
          .value();
  request.label = "model.gguf";
  auto fetched = fetch_artifact(request, cache, {http, registry.get(), {}, {}, {}});
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::registry) << fetched.error().message();
  EXPECT_FALSE(cache.find(std::string(64, 'a')));
}

// A registry that drops the first GET of the blob halfway: the item fails (no retries), and the
// next fetch continues the partial with a Range request instead of starting over.
TEST(OciArtifactResume, AnInterruptedItemResumesWithARangeRequest) {
  test::LoopbackHttpServer server;
  const std::string host = "127.0.0.1:" + std::to_string(server.port());
  const std::string model(300000, 'm');
  const std::string digest = "sha256:" + util::sha256_hex(model);
  std::vector<std::string> ranges;
  std::atomic<bool> dropped{false};
  server.server().Get(
      "/v2/models/tiny/blobs/" + digest, [&](const httplib::Request& req, httplib::Response& res) {
        const bool get = req.method == "GET"; // httplib answers HEAD with this handler too
        if (get) {
          ranges.push_back(req.get_header_value("Range"));
        }
        const bool drop = get && !dropped.exchange(true);
        res.set_content_provider(
            model.size(),
            "application/octet-stream",
            [&model, drop](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
              const std::size_t end =
                  drop ? std::min<std::size_t>(offset + length, 120000) : offset + length;
              if (offset >= end) {
                return false;
              }
              sink.write(model.data() + offset, end - offset);
              return true;
            });
      });
  oci::RegistryClientOptions options;
  options.insecure_registries = {host};
  options.retry.max_retries = 0;
  oci::RegistryClient registry(options);
  test::TempDir dir{"lume-unlock-oci-resume"};
  BlobCache cache{dir.path() + "/cache"};
  util::HttpClient http;
  FetchRequest request;
  request.source = parse_oci_source("oci://" + host + "/models/tiny@" + digest).value();
  request.label = "model.gguf";
  FetchServices services{http, &registry, {}, {}, {}};

  auto first = fetch_artifact(request, cache, services);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().category(), ErrorCategory::registry);
  auto second = fetch_artifact(request, cache, services);
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_EQ(ranges, (std::vector<std::string>{"", "bytes=120000-"}));
  EXPECT_EQ(second.value().sha256, util::sha256_hex(model));
  EXPECT_EQ(second.value().path, cache.blob_path(util::sha256_hex(model)));
}

} // namespace
} // namespace lume_unlock::fetch
