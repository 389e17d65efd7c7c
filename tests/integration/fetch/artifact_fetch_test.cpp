#include "fetch_fixture.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <filesystem>
#include <fstream>

namespace lume_unlock::fetch {
namespace {

namespace fs = std::filesystem;
using test_fixture::ArtifactFetchTest;
using test_fixture::entries_in;
using test_fixture::pattern;

TEST_F(ArtifactFetchTest, PinnedDownloadIsVerifiedCommittedAndReportsProgress) {
  const std::string bytes = pattern(3 << 20);
  const std::string sha = util::sha256_hex(bytes);
  m_server->serve_bytes("/llama.zip", bytes);
  auto fetched = fetch(request_for("/llama.zip", sha));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().path, m_cache->blob_path(sha));
  EXPECT_EQ(fetched.value().sha256, sha);
  EXPECT_EQ(fetched.value().size, bytes.size());
  EXPECT_EQ(fetched.value().network_bytes, bytes.size());
  EXPECT_FALSE(fetched.value().from_cache);
  EXPECT_EQ(util::sha256_file_hex(fetched.value().path).value(), sha);
  EXPECT_FALSE(fs::exists(partial_of("/llama.zip")));
  EXPECT_EQ(m_server->requests(), 1u);

  ASSERT_FALSE(m_events.empty());
  const auto& last = m_events.back();
  EXPECT_TRUE(last.finished);
  EXPECT_EQ(last.step, "artifact");
  EXPECT_EQ(last.unit, "bytes");
  EXPECT_EQ(last.done, bytes.size());
  EXPECT_EQ(last.total, bytes.size());
  // Throttled: a loopback transfer of 3 MiB takes well under a second, so a handful at most.
  EXPECT_LE(m_events.size(), 6u);
}

TEST_F(ArtifactFetchTest, SecondFetchMakesNoRequestAndTransfersNothing) {
  const std::string bytes = pattern(100000);
  const std::string sha = util::sha256_hex(bytes);
  m_server->serve_bytes("/m.gguf", bytes);
  ASSERT_TRUE(fetch(request_for("/m.gguf", sha)).ok());
  const auto requests = m_server->requests();
  const auto sent = m_server->body_bytes_sent();

  auto again = fetch(request_for("/m.gguf", sha));
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE(again.value().from_cache);
  EXPECT_EQ(again.value().network_bytes, 0u);
  EXPECT_EQ(again.value().path, m_cache->blob_path(sha));
  EXPECT_EQ(m_server->requests(), requests);
  EXPECT_EQ(m_server->body_bytes_sent(), sent);
  EXPECT_TRUE(m_events.back().finished);
}

TEST_F(ArtifactFetchTest, TamperedDownloadIsRefusedAndLeavesTheCacheAsItWas) {
  const std::string bytes = pattern(200000);
  const std::string sha = util::sha256_hex(bytes);
  std::string tampered = bytes;
  for (auto& c : tampered) {
    c = static_cast<char>(c ^ 0x5a); // what serve_wrong_bytes sends
  }
  m_server->serve_bytes("/x.zip", bytes);
  m_server->serve_wrong_bytes(true);
  auto fetched = fetch(request_for("/x.zip", sha));
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::registry);
  EXPECT_EQ(exit_code(fetched.error().category()), 4);
  EXPECT_EQ(fetched.error().message(),
            "the bytes of '" + m_server->url("/x.zip") +
                "' do not match the expected sha256: expected sha256:" + sha +
                ", got sha256:" + util::sha256_hex(tampered));
  EXPECT_EQ(entries_in(blobs_dir()), 0u);
  EXPECT_FALSE(fs::exists(partial_of("/x.zip")));
}

TEST_F(ArtifactFetchTest, DroppedConnectionResumesWithARangeRequest) {
  const std::string bytes = pattern(2 << 20);
  const std::string sha = util::sha256_hex(bytes);
  m_server->serve_bytes("/big.bin", bytes);
  m_server->drop_after(700000, 2);
  auto fetched = fetch(request_for("/big.bin", sha));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, sha);
  EXPECT_EQ(util::sha256_file_hex(fetched.value().path).value(), sha);
  const auto ranges = m_server->range_headers();
  ASSERT_GE(ranges.size(), 1u);
  EXPECT_EQ(ranges.front().rfind("bytes=", 0), 0u) << ranges.front();
  EXPECT_NE(ranges.front(), "bytes=0-");
  EXPECT_EQ(m_server->requests(), 3u);
  EXPECT_LT(m_server->body_bytes_sent(), 2 * bytes.size());
  EXPECT_EQ(fetched.value().network_bytes, bytes.size());
}

TEST_F(ArtifactFetchTest, PartialLeftByAnEarlierRunIsResumedFromItsEnd) {
  const std::string bytes = pattern(1 << 20);
  const std::string sha = util::sha256_hex(bytes);
  m_server->serve_bytes("/model.gguf", bytes);
  ASSERT_TRUE(m_cache->prepare().ok());
  const std::size_t kept = 400000;
  ASSERT_TRUE(util::write_file_atomic(partial_of("/model.gguf"), bytes.substr(0, kept)).ok());

  auto fetched = fetch(request_for("/model.gguf", sha));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, sha);
  EXPECT_EQ(m_server->range_headers(), (std::vector<std::string>{"bytes=400000-"}));
  EXPECT_EQ(m_server->body_bytes_sent(), bytes.size() - kept);
  EXPECT_EQ(fetched.value().network_bytes, bytes.size() - kept);
}

TEST_F(ArtifactFetchTest, RunsThatRunOutOfRetriesConvergeWhenRunAgain) {
  const std::string bytes = pattern(1 << 20);
  const std::string sha = util::sha256_hex(bytes);
  m_server->serve_bytes("/flaky.bin", bytes);
  m_server->drop_after(200000, 10);
  auto request = request_for("/flaky.bin", sha);
  request.max_retries = 1;
  auto first = fetch(request);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().category(), ErrorCategory::registry);
  EXPECT_EQ(first.error().hint(), "run the command again: the download resumes where it stopped");
  EXPECT_EQ(entries_in(blobs_dir()), 0u);
  // The bytes received so far stay for the next run.
  EXPECT_GT(fs::file_size(partial_of("/flaky.bin")), 0u);

  m_server->drop_after(0, 0);
  auto second = fetch(request);
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_EQ(second.value().sha256, sha);
  EXPECT_LT(second.value().network_bytes, bytes.size());
  EXPECT_LT(m_server->body_bytes_sent(), 2 * bytes.size());
}

TEST_F(ArtifactFetchTest, ServerIgnoringRangeStillEndsWithTheRightBytes) {
  const std::string bytes = pattern(500000);
  const std::string sha = util::sha256_hex(bytes);
  m_server->serve_bytes("/cdn.bin", bytes);
  m_server->ignore_range(true);
  ASSERT_TRUE(m_cache->prepare().ok());
  ASSERT_TRUE(util::write_file_atomic(partial_of("/cdn.bin"), bytes.substr(0, 123456)).ok());
  auto fetched = fetch(request_for("/cdn.bin", sha));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(util::sha256_file_hex(fetched.value().path).value(), sha);
  EXPECT_EQ(m_server->range_headers(), (std::vector<std::string>{"bytes=123456-"}));
  EXPECT_EQ(fetched.value().size, bytes.size());
}

TEST_F(ArtifactFetchTest, WholePartialAnsweredWith416IsCommittedWithoutABody) {
  const std::string bytes = pattern(50000);
  const std::string sha = util::sha256_hex(bytes);
  m_server->serve_bytes("/done.bin", bytes);
  ASSERT_TRUE(m_cache->prepare().ok());
  ASSERT_TRUE(util::write_file_atomic(partial_of("/done.bin"), bytes).ok());
  auto fetched = fetch(request_for("/done.bin", sha));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, sha);
  EXPECT_EQ(m_server->body_bytes_sent(), 0u);
  EXPECT_EQ(m_server->range_headers(), (std::vector<std::string>{"bytes=50000-"}));
}

TEST_F(ArtifactFetchTest, StalePartialOfAnOlderVersionIsRestartedFromZero) {
  const std::string bytes = pattern(300000);
  const std::string sha = util::sha256_hex(bytes);
  m_server->serve_bytes("/moved.bin", bytes);
  ASSERT_TRUE(m_cache->prepare().ok());
  ASSERT_TRUE(util::write_file_atomic(partial_of("/moved.bin"), std::string(1000, 'o')).ok());
  auto fetched = fetch(request_for("/moved.bin", sha));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(util::sha256_file_hex(fetched.value().path).value(), sha);
  EXPECT_EQ(m_server->requests(), 2u);
}

TEST_F(ArtifactFetchTest, RedirectIsFollowed) {
  const std::string bytes = pattern(10000);
  m_server->serve_bytes("/cdn/asset", bytes);
  m_server->redirect("/releases/download/x.zip", "/cdn/asset");
  auto fetched = fetch(request_for("/releases/download/x.zip", util::sha256_hex(bytes)));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(m_server->requests(), 2u);
}

// github.com as the publisher serves a release, reached through the mirror map: the recipe's
// URL stays the publisher's, the request goes to the stand-in.
class GithubReleaseFetch : public ArtifactFetchTest {
protected:
  static constexpr const char* k_asset =
      "/ggml-org/llama.cpp/releases/download/b10167/llama-b10167-bin-macos-arm64.tar.gz";
  void SetUp() override {
    ArtifactFetchTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    ASSERT_TRUE(m_mirrors.add("https://github.com/=" + m_server->url("/"), "test").ok());
  }
  FetchRequest github(const std::string& path, std::optional<std::string> sha256) {
    FetchRequest request = request_for(path, std::move(sha256));
    request.source = parse_https_source("https://github.com" + path).value();
    return request;
  }
};

TEST_F(GithubReleaseFetch, TheSignedRedirectIsFollowedAndThePublishersUrlIsWhatIsCached) {
  const std::string bytes = pattern(50000);
  m_server->publish_release_asset(k_asset, bytes);
  auto fetched = fetch(github(k_asset, util::sha256_hex(bytes)));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(m_server->requests_for(k_asset), 1u);
  EXPECT_EQ(m_server->requests(), 2u) << "the asset's URL, then the signed one";
  EXPECT_FALSE(fs::exists(m_cache->partial_path("https://github.com" + std::string(k_asset))));
}

TEST_F(GithubReleaseFetch, AResumeAfterTheSignedUrlExpiredAsksTheOriginalUrlAgain) {
  const std::string bytes = pattern(300000);
  // Each signed URL answers once: a client that resumed through it would get a 403.
  m_server->publish_release_asset(k_asset, bytes, 1);
  m_server->drop_after(100000);
  auto fetched = fetch(github(k_asset, util::sha256_hex(bytes)));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(m_server->requests_for(k_asset), 2u) << "the retry went back to github.com's URL";
  // The Range header goes to the asset's URL and, through its redirect, to the new signed one.
  EXPECT_EQ(m_server->range_headers(), (std::vector<std::string>{"bytes=100000-", "bytes=100000-"}))
      << "resumed, not restarted";
  EXPECT_EQ(fetched.value().network_bytes, bytes.size());
}

TEST_F(GithubReleaseFetch, AMisnamedAssetIsA404NamingThePublishersUrlAndTheMirrors) {
  m_server->publish_release_asset(k_asset, "bytes");
  const std::string zip = "/ggml-org/llama.cpp/releases/download/b10167/"
                          "llama-b10167-bin-macos-arm64.zip";
  auto fetched = fetch(github(zip, std::nullopt));
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::registry);
  EXPECT_EQ(fetched.error().message(),
            "https://github.com" + zip + " (through the mirror " + m_server->url("/") +
                "): cannot download '" + m_server->url(zip) + "': HTTP 404: not found.");
  EXPECT_EQ(entries_in(blobs_dir()), 0u);
}

TEST_F(ArtifactFetchTest, RedirectToPlainHttpIsRefused) {
  m_server->serve_bytes("/b", "bytes");
  m_server->redirect("/a", "http://127.0.0.1:" + std::to_string(m_server->port()) + "/b");
  auto fetched = fetch(request_for("/a", std::nullopt));
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::registry);
  EXPECT_EQ(fetched.error().hint(),
            "artifacts are fetched over TLS only; ask for an https:// download link");
  EXPECT_EQ(m_server->requests(), 1u);
  EXPECT_EQ(entries_in(blobs_dir()), 0u);
}

TEST_F(ArtifactFetchTest, PlainHttpSourceIsRefusedBeforeAnyRequest) {
  const auto url = "http://127.0.0.1:" + std::to_string(m_server->port()) + "/a";
  auto parsed = parse_url_source(url);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message(),
            "'" + url + "' is plain HTTP; artifacts are fetched over TLS only");
  // Even a source built around the parser does not reach the network in the clear.
  FetchRequest request;
  request.source.kind = ArtifactSource::Kind::https;
  request.source.text = url;
  request.label = "artifact";
  EXPECT_FALSE(fetch(request).ok());
  EXPECT_EQ(m_server->requests(), 0u);
}

TEST_F(ArtifactFetchTest, UnpinnedFetchLearnsAndCommitsTheDigest) {
  const std::string bytes = pattern(77777);
  m_server->serve_bytes("/latest.zip", bytes);
  auto fetched = fetch(request_for("/latest.zip", std::nullopt));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(bytes));
  EXPECT_EQ(fetched.value().path, m_cache->blob_path(util::sha256_hex(bytes)));
  EXPECT_EQ(m_cache->find(util::sha256_hex(bytes)), fetched.value().path);
}

TEST_F(ArtifactFetchTest, MissingResourceIsARegistryErrorNamingTheStatus) {
  auto fetched = fetch(request_for("/nope", std::nullopt));
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().category(), ErrorCategory::registry);
  EXPECT_EQ(fetched.error().message(),
            "cannot download '" + m_server->url("/nope") + "': HTTP 404: not found.");
  EXPECT_EQ(entries_in(blobs_dir()), 0u);
}

TEST_F(ArtifactFetchTest, HostFileIsHashedInPlaceAndChecked) {
  const std::string bytes = pattern(4096);
  const auto path = m_dir / "local.gguf";
  ASSERT_TRUE(util::write_file_atomic(path, bytes).ok());
  FetchRequest request;
  request.source = file_source(path);
  request.label = "local";
  request.sha256 = util::sha256_hex(bytes);
  auto fetched = fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().path, path);
  EXPECT_EQ(fetched.value().network_bytes, 0u);
  EXPECT_EQ(entries_in(blobs_dir()), 0u);

  request.sha256 = std::string(64, '0');
  auto wrong = fetch(request);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message(),
            "the bytes of '" + path + "' do not match the expected sha256: expected sha256:" +
                std::string(64, '0') + ", got sha256:" + util::sha256_hex(bytes));
  EXPECT_EQ(exit_code(wrong.error().category()), 4);
}

TEST_F(ArtifactFetchTest, LargeDownloadKeepsMemoryFlat) {
  // 96 MiB served from a file (the server streams it too): peak RSS must not grow by the size.
  const auto file = m_dir / "weights.bin";
  {
    std::ofstream out(file, std::ios::binary);
    const std::string block = pattern(1 << 20);
    for (int i = 0; i < 96; ++i) {
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
  }
  m_server->serve_file("/weights.bin", file);
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  auto fetched = fetch(request_for("/weights.bin", std::nullopt));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_EQ(fetched.value().size, 96u << 20);
  EXPECT_EQ(fetched.value().sha256, util::sha256_file_hex(file).value());
  const long grown_kib = after.ru_maxrss - before.ru_maxrss;
  EXPECT_LT(grown_kib, 24 * 1024) << "peak RSS grew by " << grown_kib << " KiB";
  RecordProperty("peak_rss_growth_kib", static_cast<int>(grown_kib));
}

} // namespace
} // namespace lume_unlock::fetch
