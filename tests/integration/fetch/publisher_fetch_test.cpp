// Downloads as the real hosts serve them (docs/sources.md): a connection that stalls, a
// rate-limited resolver, a partial resumed only when the server proves it is the same file, and
// Hugging Face's resolve redirect with its token and its advertised digest.
#include "fetch/fetch.hpp"
#include "fetch_fixture.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

namespace lume_unlock::fetch {
namespace {

namespace fs = std::filesystem;
using test_fixture::ArtifactFetchTest;
using test_fixture::pattern;

TEST_F(ArtifactFetchTest, AStalledConnectionIsDroppedAndTheDownloadResumed) {
  const std::string bytes = pattern(300000);
  m_server->serve_bytes("/stall.bin", bytes);
  m_server->stall_after(100000);
  auto request = request_for("/stall.bin", util::sha256_hex(bytes));
  request.stall_window = std::chrono::seconds(1);
  const auto started = std::chrono::steady_clock::now();
  auto fetched = fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(bytes));
  EXPECT_EQ(m_server->requests(), 2u);
  ASSERT_EQ(m_server->range_headers().size(), 1u);
  EXPECT_GE(m_server->range_headers()[0], "bytes=100000-") << "resumed past what had arrived";
  // The stall window is 1 s: the dropped connection and the resume take a few seconds, not the
  // minute a trickle of 4 bytes/s would otherwise last.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
}

TEST_F(ArtifactFetchTest, AServerThatKeepsStallingFailsSayingSo) {
  m_server->serve_bytes("/stall.bin", pattern(50000));
  m_server->stall_after(0, 10);
  auto request = request_for("/stall.bin", std::nullopt);
  request.stall_window = std::chrono::seconds(1);
  request.max_retries = 1;
  auto fetched = fetch(request);
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::registry);
  EXPECT_NE(fetched.error().message().find(
                "the transfer stalled: below 1024 bytes/s for 1 s (Operation too slow"),
            std::string::npos)
      << fetched.error().message();
  EXPECT_NE(fetched.error().message().find("(after 2 attempts)"), std::string::npos);
}

TEST_F(ArtifactFetchTest, RateLimitedAnswersAreRetriedAfterTheirRetryAfter) {
  const std::string bytes = pattern(40000);
  m_server->serve_bytes("/model.gguf", bytes);
  m_server->answer_busy(429, 1, 2);
  const auto started = std::chrono::steady_clock::now();
  auto fetched = fetch(request_for("/model.gguf", util::sha256_hex(bytes)));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(m_server->requests(), 3u);
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::seconds(2))
      << "each retry waited the second the server asked for";
}

TEST_F(ArtifactFetchTest, ARetryAfterLongerThanTheLimitFailsAtOnceNamingIt) {
  m_server->serve_bytes("/model.gguf", pattern(1000));
  m_server->answer_busy(503, 3600, 1);
  auto fetched = fetch(request_for("/model.gguf", std::nullopt));
  ASSERT_FALSE(fetched.ok());
  EXPECT_NE(fetched.error().message().find(
                "HTTP 503: the server asks to wait 3600 s (Retry-After), longer than the 120 s"),
            std::string::npos)
      << fetched.error().message();
  EXPECT_EQ(m_server->requests(), 1u);
}

TEST_F(ArtifactFetchTest, AnUnpinnedPartialResumesWhenIfRangeProvesItIsTheSameFile) {
  const std::string bytes = pattern(300000);
  m_server->serve_bytes("/unpinned.bin", bytes);
  m_server->drop_after(100000);
  auto request = request_for("/unpinned.bin", std::nullopt);
  request.max_retries = 0;
  ASSERT_FALSE(fetch(request).ok());
  EXPECT_EQ(util::read_file(partial_of("/unpinned.bin") + ".etag").value(),
            m_server->etag("/unpinned.bin"));

  auto fetched = fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(bytes));
  EXPECT_EQ(m_server->range_headers(), (std::vector<std::string>{"bytes=100000-"}));
  EXPECT_EQ(fetched.value().network_bytes, bytes.size() - 100000);
  EXPECT_FALSE(fs::exists(partial_of("/unpinned.bin") + ".etag")) << "nothing is left beside it";
}

TEST_F(ArtifactFetchTest, AnUnpinnedPartialOfAFileThatChangedStartsOverInsteadOfSplicing) {
  m_server->serve_bytes("/unpinned.bin", pattern(300000));
  m_server->drop_after(100000);
  auto request = request_for("/unpinned.bin", std::nullopt);
  request.max_retries = 0;
  ASSERT_FALSE(fetch(request).ok());

  const std::string changed = pattern(300000).replace(0, 5, "newer");
  m_server->serve_bytes("/unpinned.bin", changed); // a new version, a new ETag
  auto fetched = fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(changed)) << "never the old head spliced";
  EXPECT_EQ(fetched.value().network_bytes, changed.size());
}

TEST_F(ArtifactFetchTest, AnUnpinnedPartialWithoutAValidatorStartsOver) {
  const std::string bytes = pattern(200000);
  m_server->serve_bytes("/unpinned.bin", bytes);
  ASSERT_TRUE(m_cache->prepare().ok());
  ASSERT_TRUE(
      util::write_file_atomic(partial_of("/unpinned.bin"), "stale bytes of unknown origin").ok());
  auto fetched = fetch(request_for("/unpinned.bin", std::nullopt));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(bytes));
  EXPECT_TRUE(m_server->range_headers().empty());
}

// Hugging Face as it serves resolve/<revision>/<file>: the resolver (this server, reached as
// huggingface.co through the mirror map) answers 302 to a CDN on another host and port.
class HuggingFaceFetch : public ArtifactFetchTest {
protected:
  static constexpr const char* k_file =
      "/TheBloke/TinyLlama-1.1B-Chat-v1.0-GGUF/resolve/52e7645ba7c309695bec7ac98f4f005b139cf465/"
      "tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf";
  void SetUp() override {
    ArtifactFetchTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    std::string why_not;
    m_cdn = test::ArtifactServer::start(*m_ca, why_not);
    ASSERT_TRUE(m_cdn) << why_not;
    ASSERT_TRUE(m_mirrors.add("https://huggingface.co/=" + m_server->url("/"), "test").ok());
    m_cdn->serve_bytes("/xet/model", m_model);
  }
  void publish(const std::string& advertised_sha256, const std::string& required_token = {}) {
    m_server->publish_hub_file(
        k_file, advertised_sha256, m_model.size(), m_cdn->url("/xet/model"), required_token);
  }
  FetchRequest hub_request(std::optional<std::string> sha256) {
    FetchRequest request = request_for(k_file, std::move(sha256));
    request.source = parse_https_source("https://huggingface.co" + std::string(k_file)).value();
    return request;
  }
  FetchServices services() {
    return FetchServices{*m_http, nullptr, {}, m_mirrors, m_hugging_face_token};
  }
  const std::string m_model = pattern(120000);
  std::unique_ptr<test::ArtifactServer> m_cdn;
};

TEST_F(HuggingFaceFetch, TheTokenReachesTheHubAndNeverTheCdnOrTheOutput) {
  m_hugging_face_token = "hf_gated_secret_0123456789";
  publish(util::sha256_hex(m_model), m_hugging_face_token);
  auto fetched = fetch(hub_request(util::sha256_hex(m_model)));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(m_server->authorizations(),
            (std::vector<std::string>{std::string(k_file) + " Bearer " + m_hugging_face_token}));
  EXPECT_EQ(m_cdn->authorizations(), (std::vector<std::string>{"/xet/model "}))
      << "the redirect's host gets no token";

  // A failure says what went wrong without the token in it.
  m_cdn->serve_wrong_bytes(true);
  m_cache = std::make_unique<BlobCache>(m_dir.path() + "/other-cache");
  auto refused = fetch(hub_request(util::sha256_hex(m_model)));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message().find("hf_gated"), std::string::npos);
  EXPECT_EQ(refused.error().hint().find("hf_gated"), std::string::npos);
}

TEST_F(HuggingFaceFetch, AGatedModelWithoutATokenSaysHowToGetAccess) {
  publish(util::sha256_hex(m_model), "hf_needed");
  auto fetched = fetch(hub_request(std::nullopt));
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::registry);
  EXPECT_NE(fetched.error().message().find("HTTP 401"), std::string::npos)
      << fetched.error().message();
  EXPECT_EQ(fetched.error().hint().rfind("gated and private models need a token: set HF_TOKEN", 0),
            0u)
      << fetched.error().hint();
  EXPECT_EQ(m_cdn->requests(), 0u);
}

TEST_F(HuggingFaceFetch, TheAdvertisedDigestIsReadFromOneHeadWithoutAByteOfTheBody) {
  publish(util::sha256_hex(m_model));
  const auto advertised = advertised_digest(hub_request(std::nullopt).source, services());
  ASSERT_TRUE(advertised);
  EXPECT_EQ(advertised->sha256, util::sha256_hex(m_model));
  EXPECT_EQ(advertised->size, m_model.size());
  EXPECT_EQ(m_server->requests(), 1u);
  EXPECT_EQ(m_cdn->requests(), 0u) << "the CDN is not asked";
  EXPECT_EQ(m_server->body_bytes_sent() + m_cdn->body_bytes_sent(), 0u);
}

TEST_F(HuggingFaceFetch, ASourceThatAdvertisesNothingHasNoAdvertisedDigest) {
  m_server->serve_bytes("/plain.bin", m_model);
  EXPECT_FALSE(advertised_digest(request_for("/plain.bin", std::nullopt).source, services()));
  EXPECT_EQ(m_server->body_bytes_sent(), 0u);
}

TEST(ReadAdvertisedDigest, TakesAQuotedSha256AndASizeAndNothingElse) {
  const std::string sha(64, 'a');
  auto response = [](std::string etag, std::string size) {
    util::HttpResponse r;
    r.headers = {{"X-Linked-Etag", std::move(etag)}, {"X-Linked-Size", std::move(size)}};
    return r;
  };
  ASSERT_TRUE(read_advertised_digest(response("\"" + sha + "\"", "668788096")));
  EXPECT_EQ(read_advertised_digest(response("\"" + sha + "\"", "668788096"))->size, 668788096u);
  EXPECT_TRUE(read_advertised_digest(response("W/\"" + sha + "\"", "1")));
  // A git blob id (files outside LFS), a bad size, a missing header: no digest.
  EXPECT_FALSE(read_advertised_digest(response("\"" + std::string(40, 'a') + "\"", "1")));
  EXPECT_FALSE(read_advertised_digest(response("\"" + sha + "\"", "-1")));
  EXPECT_FALSE(read_advertised_digest(util::HttpResponse{}));
}

} // namespace
} // namespace lume_unlock::fetch
