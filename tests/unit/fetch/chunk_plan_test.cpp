#include "fetch/chunk_plan.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::fetch {
namespace {

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

} // namespace
} // namespace lume_unlock::fetch
