// The world of the fetch tests: a loopback HTTPS artifact server on a throwaway CA, a client that
// trusts it, a cache in a temporary directory and the progress events a fetch reports.
#pragma once

#include "fetch/fetch.hpp"
#include "support/artifact_server.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace lume_unlock::fetch::test_fixture {

namespace fs = std::filesystem;

/// Bytes that differ at every offset, so a resume at the wrong place changes the digest.
inline std::string pattern(std::size_t size) {
  std::string bytes(size, '\0');
  std::uint32_t x = 2463534242u;
  for (auto& c : bytes) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x);
  }
  return bytes;
}

inline std::size_t entries_in(const std::string& dir) {
  if (!fs::exists(dir)) {
    return 0;
  }
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

class ArtifactFetchTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why_not;
    m_ca = test::TestCa::create(why_not);
    if (!m_ca) {
      GTEST_SKIP() << "openssl cannot make the test CA: " << why_not;
    }
    m_server = test::ArtifactServer::start(*m_ca, why_not);
    ASSERT_TRUE(m_server) << why_not;
    util::HttpClientOptions options;
    options.ca_file = m_ca->ca_file();
    m_http = std::make_unique<util::HttpClient>(options);
    m_cache = std::make_unique<BlobCache>(m_dir.path() + "/cache");
  }

  FetchRequest request_for(const std::string& path, std::optional<std::string> sha256) {
    FetchRequest request;
    request.source = parse_https_source(m_server->url(path)).value();
    request.sha256 = std::move(sha256);
    request.label = "artifact";
    request.retry_backoff = std::chrono::milliseconds(1);
    // One stream: these tests hold its exact requests; parallel_fetch_test.cpp asks for more.
    request.connections = 1;
    return request;
  }

  /// Several connections over small chunks, so a file of a few hundred KiB is many chunks.
  FetchRequest parallel_request_for(const std::string& path, std::optional<std::string> sha256) {
    FetchRequest request = request_for(path, std::move(sha256));
    request.connections = 3;
    request.chunk_bytes = 64u << 10;
    return request;
  }

  Result<FetchedArtifact> fetch(const FetchRequest& request) {
    FetchServices services{*m_http,
                           nullptr,
                           [this](const util::ProgressEvent& event) { m_events.push_back(event); },
                           m_mirrors,
                           m_hugging_face_token};
    return fetch_artifact(request, *m_cache, services);
  }

  std::string partial_of(const std::string& path) const {
    return m_cache->partial_path(m_server->url(path));
  }
  std::string blobs_dir() const { return m_cache->root() + "/blobs/sha256"; }

  test::TempDir m_dir;
  std::unique_ptr<test::TestCa> m_ca;
  std::unique_ptr<test::ArtifactServer> m_server;
  std::unique_ptr<util::HttpClient> m_http;
  std::unique_ptr<BlobCache> m_cache;
  MirrorMap m_mirrors;
  std::string m_hugging_face_token;
  std::vector<util::ProgressEvent> m_events;
};

} // namespace lume_unlock::fetch::test_fixture
