// oci:// install sources against a real docker-registry on TLS: a model pushed as a blob is
// fetched by its digest into the cache, and a digest the registry lacks is a registry error.
#include "fetch/artifact_fetch.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

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

} // namespace
} // namespace lume_unlock::fetch
