#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/download_parts.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace lume_unlock::util {
namespace {

TEST(ResumeHeaders, ContentRangeGivesStartAndTotal) {
  const auto range = parse_content_range("bytes 100-199/200");
  EXPECT_EQ(range.start, 100u);
  EXPECT_EQ(range.total, 200u);
  EXPECT_FALSE(parse_content_range("bytes 0-9/*").total);
  EXPECT_FALSE(parse_content_range("items 0-9/10").start);
  EXPECT_FALSE(parse_content_range("bytes */10").start);
  EXPECT_EQ(parse_content_range("bytes */10").total, 10u);
}

TEST(ResumeHeaders, OnlyAStrongEtagCanProveTheSameFile) {
  EXPECT_EQ(strong_etag("\"v1\""), "\"v1\"");
  EXPECT_FALSE(strong_etag("W/\"v1\"")) << "If-Range takes no weak validator";
  EXPECT_FALSE(strong_etag("v1"));
  EXPECT_FALSE(strong_etag("\"a\"b\""));
  EXPECT_FALSE(strong_etag("\"a b\""));
  EXPECT_FALSE(strong_etag(""));
}

TEST(ChunkPlan, CutsFixedChunksWithAShortLastOne) {
  const auto plan = ChunkPlan::cut(25, 10);
  ASSERT_EQ(plan.count(), 3u);
  EXPECT_EQ(plan.start(2), 20u);
  EXPECT_EQ(plan.length(0), 10u);
  EXPECT_EQ(plan.length(2), 5u);
  EXPECT_EQ(plan.done_bytes(), 0u);
  EXPECT_EQ(ChunkPlan::cut(20, 10).count(), 2u) << "no empty chunk at an exact multiple";
}

TEST(ChunkPlan, ASingleStreamPrefixBecomesTheFirstChunksDone) {
  const auto plan = ChunkPlan::cut(25, 10, 13, "\"e\"");
  EXPECT_EQ(plan.done, (std::vector<std::uint64_t>{10, 3, 0}));
  EXPECT_EQ(plan.contiguous_prefix(), 13u);
  EXPECT_EQ(ChunkPlan::cut(25, 10, 99).done_bytes(), 25u) << "never more than the file";
}

TEST(ChunkPlan, TheContiguousPrefixStopsAtTheFirstUnfinishedChunk) {
  auto plan = ChunkPlan::cut(40, 10);
  plan.done = {10, 4, 10, 10};
  EXPECT_EQ(plan.contiguous_prefix(), 14u) << "chunks 2 and 3 wait for chunk 1";
  EXPECT_EQ(plan.done_bytes(), 34u);
  plan.done = {0, 10, 10, 10};
  EXPECT_EQ(plan.contiguous_prefix(), 0u);
}

TEST(ChunkPlan, TheRecordRoundTripsExactly) {
  auto plan = ChunkPlan::cut(25, 10, 0, "\"abc\"");
  plan.done = {10, 7, 5};
  const std::string text = chunk_plan_text(plan);
  EXPECT_EQ(text, "lume-unlock chunks 1\nsize 25\nchunk 10\netag \"abc\"\ndone 10 7 5\n");
  const auto parsed = parse_chunk_plan(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->done, plan.done);
  EXPECT_EQ(parsed->etag, "\"abc\"");
  EXPECT_EQ(parsed->size, 25u);
  EXPECT_EQ(parsed->chunk_bytes, 10u);
  plan.etag.clear();
  EXPECT_TRUE(parse_chunk_plan(chunk_plan_text(plan))) << "a pinned item may have no ETag";
}

TEST(ChunkPlan, ADamagedRecordIsNeverTrusted) {
  const std::string good = "lume-unlock chunks 1\nsize 25\nchunk 10\ndone 10 7 5\n";
  ASSERT_TRUE(parse_chunk_plan(good));
  for (const std::string& bad : {
           std::string("lume-unlock chunks 2\nsize 25\nchunk 10\ndone 10 7 5\n"),
           std::string("lume-unlock chunks 1\nsize 25\nchunk 10\ndone 10 7\n"),
           std::string("lume-unlock chunks 1\nsize 25\nchunk 10\ndone 10 11 5\n"),
           std::string("lume-unlock chunks 1\nsize 25\nchunk 0\ndone\n"),
           std::string("lume-unlock chunks 1\nsize 25\nchunk 10\netag W/\"x\"\ndone 10 7 5\n"),
           std::string("lume-unlock chunks 1\nsize 25\nchunk 10\ndone 10 7 5"),
           std::string("lume-unlock chunks 1\nsize 25\nchunk 10\ndone 10 7 5\nmore\n"),
           std::string("lume-unlock chunks 1\nsize -25\nchunk 10\ndone 10 7 5\n"),
           good.substr(0, good.size() / 2),
       }) {
    EXPECT_FALSE(parse_chunk_plan(bad)) << bad;
  }
}

TEST(ChunkPlan, TheRecordIsKeptBesideThePartial) {
  test::TempDir dir;
  const std::string partial = dir.path() + "/p";
  EXPECT_FALSE(load_chunk_plan(partial));
  auto plan = ChunkPlan::cut(30, 10, 15);
  ASSERT_TRUE(save_chunk_plan(partial, plan).ok());
  EXPECT_EQ(chunk_plan_path(partial), partial + ".chunks");
  const auto loaded = load_chunk_plan(partial);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->done, plan.done);
  ASSERT_TRUE(util::write_file_atomic(partial + ".chunks", "garbage").ok());
  EXPECT_FALSE(load_chunk_plan(partial));
}

std::string bytes_of(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<char>((i * 131) ^ (i >> 9));
  }
  return bytes;
}

TEST(OrderedHasher, HashesEveryByteInOrderAsThePrefixGrows) {
  test::TempDir dir;
  const std::string path = dir.path() + "/f";
  const std::string bytes = bytes_of((3u << 20) + 12345);
  ASSERT_TRUE(util::write_file_atomic(path, bytes).ok());
  OrderedHasher hasher(path);
  EXPECT_FALSE(hasher.step(0).value()) << "nothing finished yet";
  ASSERT_TRUE(hasher.catch_up(1000).ok());
  EXPECT_EQ(hasher.hashed(), 1000u);
  ASSERT_TRUE(hasher.catch_up(999).ok()) << "a prefix never shrinks what was hashed";
  EXPECT_EQ(hasher.hashed(), 1000u);
  ASSERT_TRUE(hasher.step(bytes.size()).value());
  EXPECT_EQ(hasher.hashed(), 1000u + (1u << 20)) << "one block a step";
  ASSERT_TRUE(hasher.catch_up(bytes.size()).ok());
  EXPECT_EQ(hasher.finish_hex(), util::sha256_hex(bytes));
}

TEST(OrderedHasher, AFileShorterThanItsChunksClaimIsAnError) {
  test::TempDir dir;
  const std::string path = dir.path() + "/f";
  ASSERT_TRUE(util::write_file_atomic(path, "short").ok());
  OrderedHasher hasher(path);
  const auto status = hasher.catch_up(100);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            "cannot hash the partial download '" + path +
                "': it ends at byte 5, before the 100 bytes its chunks claim");
}

TEST(BufferRelay, HandsBuffersOverInOrderWithNoMoreThanItsCount) {
  BufferRelay relay(2, 4);
  std::string received;
  std::thread consumer([&] {
    while (BufferRelay::Buffer* buffer = relay.take()) {
      received.append(buffer->data.get(), buffer->size);
      relay.release(buffer);
    }
  });
  std::vector<const BufferRelay::Buffer*> seen;
  for (char c = 'a'; c <= 'j'; ++c) {
    BufferRelay::Buffer* buffer = relay.acquire();
    ASSERT_NE(buffer, nullptr);
    if (std::find(seen.begin(), seen.end(), buffer) == seen.end()) {
      seen.push_back(buffer);
    }
    buffer->data[0] = c;
    buffer->size = 1;
    relay.publish(buffer);
  }
  relay.close();
  consumer.join();
  EXPECT_EQ(received, "abcdefghij");
  EXPECT_LE(seen.size(), 2u) << "buffers are reused, never more than the count";
}

TEST(BufferRelay, CancelReleasesAProducerWaitingForABuffer) {
  BufferRelay relay(1, 4);
  BufferRelay::Buffer* only = relay.acquire();
  ASSERT_NE(only, nullptr);
  std::thread canceller([&] { relay.cancel(); });
  EXPECT_EQ(relay.acquire(), nullptr) << "the only buffer is out: waits until cancelled";
  canceller.join();
  EXPECT_EQ(relay.take(), nullptr);
}

} // namespace
} // namespace lume_unlock::util
