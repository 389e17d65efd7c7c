// Downloads over several connections (issue 32): what one stream guarantees must still hold
// when the file comes as ranges at once — verified bytes only, resume, If-Range, the original
// URL on every request, retries, HF_TOKEN to the hub only, flat memory.
#include "fetch_fixture.hpp"
#include "util/atomic_file.hpp"
#include "util/download_parts.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <fstream>

namespace lume_unlock::fetch {
namespace {

using util::ChunkPlan;
using util::load_chunk_plan;
using util::save_chunk_plan;

namespace fs = std::filesystem;
using test_fixture::ArtifactFetchTest;
using test_fixture::entries_in;
using test_fixture::pattern;

constexpr std::uint64_t k_chunk = 64u << 10;

/// "bytes=A-B" of every chunk of a file of `size` bytes, in order.
std::vector<std::string> chunk_ranges(std::uint64_t size) {
  std::vector<std::string> ranges;
  for (std::uint64_t start = 0; start < size; start += k_chunk) {
    const auto last = std::min(size, start + k_chunk) - 1;
    ranges.push_back("bytes=" + std::to_string(start) + "-" + std::to_string(last));
  }
  return ranges;
}

/// The ranges after the probe's, sorted (connections ask in parallel, so arrival order varies).
std::vector<std::string> chunk_requests(const test::ArtifactServer& server) {
  auto ranges = server.range_headers();
  EXPECT_FALSE(ranges.empty());
  if (ranges.empty()) {
    return ranges;
  }
  EXPECT_EQ(ranges.front(), "bytes=0-0") << "the probe comes first";
  ranges.erase(ranges.begin());
  std::sort(ranges.begin(), ranges.end(), [](const std::string& a, const std::string& b) {
    return std::stoull(a.substr(6)) < std::stoull(b.substr(6));
  });
  return ranges;
}

TEST_F(ArtifactFetchTest, AFileOfManyChunksComesOverSeveralConnectionsHashedInOrder) {
  const std::string bytes = pattern(1 << 20);
  const std::string sha = util::sha256_hex(bytes);
  m_server->serve_bytes("/model.gguf", bytes);
  auto fetched = fetch(parallel_request_for("/model.gguf", sha));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, sha);
  EXPECT_EQ(util::sha256_file_hex(fetched.value().path).value(), sha);
  EXPECT_EQ(fetched.value().network_bytes, bytes.size()) << "no byte twice";
  EXPECT_EQ(chunk_requests(*m_server), chunk_ranges(bytes.size()));
  EXPECT_EQ(m_server->requests(), 17u) << "the probe and 16 chunks";
  EXPECT_FALSE(fs::exists(partial_of("/model.gguf")));
  EXPECT_FALSE(fs::exists(partial_of("/model.gguf") + ".chunks")) << "nothing is left beside it";

  // One progress step whose done only grows, ending with every byte.
  ASSERT_FALSE(m_events.empty());
  std::uint64_t done = 0;
  for (const auto& event : m_events) {
    EXPECT_EQ(event.step, "artifact");
    ASSERT_TRUE(event.done);
    EXPECT_GE(*event.done, done);
    done = *event.done;
  }
  EXPECT_TRUE(m_events.back().finished);
  EXPECT_EQ(m_events.back().done, bytes.size());
  EXPECT_EQ(m_events.back().total, bytes.size());
}

TEST_F(ArtifactFetchTest, EveryChunkOfAnUnpinnedFileCarriesIfRangeWithItsStrongEtag) {
  const std::string bytes = pattern(512 << 10);
  m_server->serve_bytes("/unpinned.bin", bytes);
  auto fetched = fetch(parallel_request_for("/unpinned.bin", std::nullopt));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(bytes));
  const auto conditions = m_server->if_range_headers();
  ASSERT_EQ(conditions.size(), 9u);
  EXPECT_EQ(conditions.front(), "") << "the probe has no bytes to protect";
  for (std::size_t i = 1; i < conditions.size(); ++i) {
    EXPECT_EQ(conditions[i], m_server->etag("/unpinned.bin")) << i;
  }
}

TEST_F(ArtifactFetchTest, AFileReplacedMidwayStartsOverAsOneStreamAndIsNeverSpliced) {
  const std::string old_bytes = pattern(1 << 20);
  const std::string new_bytes = pattern(1 << 20).replace(0, 5, "newer");
  m_server->serve_bytes("/unpinned.bin", old_bytes);
  m_server->replace_after("/unpinned.bin", 4, new_bytes); // after the probe and three chunks
  auto fetched = fetch(parallel_request_for("/unpinned.bin", std::nullopt));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(new_bytes));
  EXPECT_EQ(util::sha256_file_hex(fetched.value().path).value(), util::sha256_hex(new_bytes));
  EXPECT_FALSE(fs::exists(partial_of("/unpinned.bin") + ".chunks"));
}

TEST_F(ArtifactFetchTest, ARangeOfANewerVersionIsNeverSplicedEvenWhenIfRangeIsIgnored) {
  const std::string old_bytes = pattern(1 << 20);
  const std::string new_bytes = pattern(1 << 20).replace(0, 5, "newer");
  m_server->serve_bytes("/unpinned.bin", old_bytes);
  m_server->ignore_if_range(true); // later chunks get 206, but with the new version's ETag
  m_server->replace_after("/unpinned.bin", 4, new_bytes);
  auto fetched = fetch(parallel_request_for("/unpinned.bin", std::nullopt));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(new_bytes));
  EXPECT_EQ(util::sha256_file_hex(fetched.value().path).value(), util::sha256_hex(new_bytes));
}

TEST_F(ArtifactFetchTest, APinnedFileReplacedMidwayIsRefusedAndNothingIsCached) {
  const std::string old_bytes = pattern(1 << 20);
  m_server->serve_bytes("/model.gguf", old_bytes);
  m_server->replace_after("/model.gguf", 4, pattern(1 << 20).replace(0, 5, "newer"));
  auto fetched = fetch(parallel_request_for("/model.gguf", util::sha256_hex(old_bytes)));
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.error().message().rfind("the bytes of '", 0), 0u) << fetched.error().message();
  EXPECT_EQ(entries_in(blobs_dir()), 0u);
  EXPECT_FALSE(fs::exists(partial_of("/model.gguf")));
}

TEST_F(ArtifactFetchTest, TamperedChunksAreRefusedAndLeaveTheCacheAsItWas) {
  const std::string bytes = pattern(1 << 20);
  m_server->serve_bytes("/model.gguf", bytes);
  m_server->serve_wrong_bytes(true);
  auto fetched = fetch(parallel_request_for("/model.gguf", util::sha256_hex(bytes)));
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(exit_code(fetched.error().category()), 4);
  EXPECT_EQ(entries_in(blobs_dir()), 0u);
  EXPECT_FALSE(fs::exists(partial_of("/model.gguf")));
  EXPECT_FALSE(fs::exists(partial_of("/model.gguf") + ".chunks"));
}

TEST_F(ArtifactFetchTest, AServerThatIgnoresRangesGetsOneStream) {
  const std::string bytes = pattern(1 << 20);
  m_server->serve_bytes("/model.gguf", bytes);
  m_server->ignore_range(true);
  auto fetched = fetch(parallel_request_for("/model.gguf", util::sha256_hex(bytes)));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(m_server->range_headers(), (std::vector<std::string>{"bytes=0-0"}));
  EXPECT_EQ(m_server->requests(), 2u) << "the probe, cut off at its first byte, then one GET";
}

TEST_F(ArtifactFetchTest, AFileUnderTwoChunksComesAsOneStream) {
  const std::string bytes = pattern(100000);
  m_server->serve_bytes("/small.bin", bytes);
  auto fetched = fetch(parallel_request_for("/small.bin", util::sha256_hex(bytes)));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(m_server->range_headers(), (std::vector<std::string>{"bytes=0-0"}));
  EXPECT_EQ(fetched.value().network_bytes, bytes.size());
}

TEST_F(ArtifactFetchTest, ADroppedChunkResumesWhereItStopped) {
  const std::string bytes = pattern(1 << 20);
  m_server->serve_bytes("/model.gguf", bytes);
  m_server->drop_after(10000);
  auto fetched = fetch(parallel_request_for("/model.gguf", util::sha256_hex(bytes)));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().network_bytes, bytes.size()) << "resumed, not restarted";
  const auto ranges = chunk_requests(*m_server);
  ASSERT_EQ(ranges.size(), 17u);
  const auto resumed = std::count_if(ranges.begin(), ranges.end(), [](const std::string& range) {
    return std::stoull(range.substr(6)) % k_chunk == 10000;
  });
  EXPECT_EQ(resumed, 1);
}

TEST_F(ArtifactFetchTest, ABusyAnswerToAChunkIsRetriedAfterItsRetryAfter) {
  const std::string bytes = pattern(512 << 10);
  m_server->serve_bytes("/model.gguf", bytes);
  m_server->answer_busy(503, 0, 1, 1); // the probe passes, a chunk is refused once
  auto fetched = fetch(parallel_request_for("/model.gguf", util::sha256_hex(bytes)));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(m_server->requests(), 10u) << "the probe, 8 chunks and the one retried";
}

TEST_F(ArtifactFetchTest, AStalledChunkIsDroppedAndResumed) {
  const std::string bytes = pattern(512 << 10);
  m_server->serve_bytes("/model.gguf", bytes);
  m_server->stall_after(30000);
  auto request = parallel_request_for("/model.gguf", util::sha256_hex(bytes));
  request.stall_window = std::chrono::seconds(1);
  auto fetched = fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().network_bytes, bytes.size());
  EXPECT_EQ(chunk_requests(*m_server).size(), 9u);
}

TEST_F(ArtifactFetchTest, AFetchThatRunsOutOfRetriesKeepsItsChunksForTheNextRun) {
  const std::string bytes = pattern(1 << 20);
  m_server->serve_bytes("/model.gguf", bytes);
  m_server->drop_after(20000);
  auto request = parallel_request_for("/model.gguf", util::sha256_hex(bytes));
  request.max_retries = 0;
  auto failed = fetch(request);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message().find("(after 1 attempts)"), std::string::npos)
      << failed.error().message();
  const auto record = load_chunk_plan(partial_of("/model.gguf"));
  ASSERT_TRUE(record) << "the record stays beside the partial";
  EXPECT_GE(record->done_bytes(), 20000u);

  auto fetched = fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(bytes));
  EXPECT_EQ(fetched.value().network_bytes, bytes.size() - record->done_bytes());
}

/// A partial as a killed parallel run leaves it: the record and, for each chunk, its first
/// `done` bytes (holes elsewhere).
void leave_killed_run(const std::string& partial, const std::string& bytes, const ChunkPlan& plan) {
  std::string file(bytes.size(), '\0');
  for (std::size_t i = 0; i < plan.count(); ++i) {
    const auto start = static_cast<std::size_t>(plan.start(i));
    file.replace(start, plan.done[i], bytes.substr(start, plan.done[i]));
  }
  ASSERT_TRUE(util::write_file_atomic(partial, file).ok());
  ASSERT_TRUE(save_chunk_plan(partial, plan).ok());
}

TEST_F(ArtifactFetchTest, AKilledRunResumesEachChunkWhereItStopped) {
  const std::string bytes = pattern(640 << 10); // 10 chunks
  m_server->serve_bytes("/unpinned.bin", bytes);
  ASSERT_TRUE(m_cache->prepare().ok());
  auto plan = ChunkPlan::cut(bytes.size(), k_chunk, 0, m_server->etag("/unpinned.bin"));
  plan.done = {k_chunk, 1000, k_chunk, 0, k_chunk, k_chunk, 5, k_chunk, k_chunk, k_chunk};
  leave_killed_run(partial_of("/unpinned.bin"), bytes, plan);

  auto fetched = fetch(parallel_request_for("/unpinned.bin", std::nullopt));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(bytes));
  EXPECT_EQ(fetched.value().network_bytes, bytes.size() - plan.done_bytes());
  const auto first = [](std::uint64_t chunk, std::uint64_t done) {
    return "bytes=" + std::to_string(chunk * k_chunk + done) + "-" +
           std::to_string((chunk + 1) * k_chunk - 1);
  };
  EXPECT_EQ(chunk_requests(*m_server),
            (std::vector<std::string>{first(1, 1000), first(3, 0), first(6, 5)}));
  EXPECT_EQ(m_server->if_range_headers().front(), m_server->etag("/unpinned.bin"))
      << "the probe proves the bytes kept are of the file served now";
}

TEST_F(ArtifactFetchTest, AKilledRunOfAFileThatChangedSinceStartsOver) {
  const std::string bytes = pattern(640 << 10);
  m_server->serve_bytes("/unpinned.bin", bytes);
  ASSERT_TRUE(m_cache->prepare().ok());
  auto plan = ChunkPlan::cut(bytes.size(), k_chunk, 0, "\"an-older-version\"");
  plan.done = {k_chunk, 1000, k_chunk, 0, 0, 0, 0, 0, 0, 0};
  leave_killed_run(partial_of("/unpinned.bin"), std::string(bytes.size(), 'x'), plan);

  auto fetched = fetch(parallel_request_for("/unpinned.bin", std::nullopt));
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(bytes)) << "no old byte spliced in";
  EXPECT_EQ(fetched.value().network_bytes, bytes.size());
}

TEST_F(ArtifactFetchTest, AParallelPartialHandedToOneStreamKeepsItsContiguousPrefix) {
  const std::string bytes = pattern(640 << 10);
  m_server->serve_bytes("/unpinned.bin", bytes);
  ASSERT_TRUE(m_cache->prepare().ok());
  auto plan = ChunkPlan::cut(bytes.size(), k_chunk, 0, m_server->etag("/unpinned.bin"));
  plan.done = {k_chunk, k_chunk, 500, k_chunk, 0, 0, 0, 0, 0, 0};
  leave_killed_run(partial_of("/unpinned.bin"), bytes, plan);

  auto fetched = fetch(request_for("/unpinned.bin", std::nullopt)); // one connection
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(fetched.value().sha256, util::sha256_hex(bytes));
  const std::string resume = "bytes=" + std::to_string(2 * k_chunk + 500) + "-";
  EXPECT_EQ(m_server->range_headers(), (std::vector<std::string>{resume}));
  EXPECT_EQ(m_server->if_range_headers(),
            (std::vector<std::string>{m_server->etag("/unpinned.bin")}));
}

TEST_F(ArtifactFetchTest, EveryChunkAsksTheOriginalUrlNotAnExpiringSignedOne) {
  const std::string asset = "/ggml-org/llama.cpp/releases/download/b10167/llama.tar.gz";
  const std::string bytes = pattern(512 << 10);
  ASSERT_TRUE(m_mirrors.add("https://github.com/=" + m_server->url("/"), "test").ok());
  // Each signed URL answers once: a connection that went back to one would get a 403.
  m_server->publish_release_asset(asset, bytes, 1);
  m_server->drop_after(10000);
  auto request = parallel_request_for(asset, util::sha256_hex(bytes));
  request.source = parse_https_source("https://github.com" + asset).value();
  auto fetched = fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(m_server->requests_for(asset), 10u) << "the probe, 8 chunks and a resumed one";
}

TEST_F(ArtifactFetchTest, TheTokenGoesToTheHubWithEveryChunkAndNeverToTheCdn) {
  const std::string file = "/org/model/resolve/0123456789abcdef0123456789abcdef01234567/m.gguf";
  const std::string bytes = pattern(256 << 10);
  std::string why_not;
  auto cdn = test::ArtifactServer::start(*m_ca, why_not);
  ASSERT_TRUE(cdn) << why_not;
  cdn->serve_bytes("/xet/model", bytes);
  m_hugging_face_token = "hf_parallel_secret";
  ASSERT_TRUE(m_mirrors.add("https://huggingface.co/=" + m_server->url("/"), "test").ok());
  m_server->publish_hub_file(
      file, util::sha256_hex(bytes), bytes.size(), cdn->url("/xet/model"), m_hugging_face_token);
  auto request = parallel_request_for(file, util::sha256_hex(bytes));
  request.source = parse_https_source("https://huggingface.co" + file).value();
  auto fetched = fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  EXPECT_EQ(m_server->authorizations(),
            std::vector<std::string>(5, file + " Bearer " + m_hugging_face_token))
      << "the probe and 4 chunks, each through the hub";
  EXPECT_EQ(cdn->authorizations(), std::vector<std::string>(5, "/xet/model "));
}

TEST_F(ArtifactFetchTest, ALargeParallelDownloadKeepsMemoryFlat) {
  // 96 MiB in 16 MiB chunks over 4 connections: bounded buffers per connection, a 1 MiB block
  // for the hasher, nothing that grows with the file.
  const auto file = m_dir / "weights.bin";
  {
    std::ofstream out(file, std::ios::binary);
    const std::string block = pattern(1 << 20);
    for (int i = 0; i < 96; ++i) {
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
  }
  m_server->serve_file("/weights.bin", file);
  auto request = request_for("/weights.bin", std::nullopt);
  request.connections = 4;
  request.chunk_bytes = 16u << 20;
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  auto fetched = fetch(request);
  ASSERT_TRUE(fetched.ok()) << fetched.error().message();
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_EQ(fetched.value().sha256, util::sha256_file_hex(file).value());
  EXPECT_EQ(m_server->range_headers().size(), 7u) << "the probe and 6 chunks";
  const long grown_kib = after.ru_maxrss - before.ru_maxrss;
  EXPECT_LT(grown_kib, 24 * 1024) << "peak RSS grew by " << grown_kib << " KiB";
  RecordProperty("peak_rss_growth_kib", static_cast<int>(grown_kib));
}

} // namespace
} // namespace lume_unlock::fetch
