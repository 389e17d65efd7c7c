#include "fetch/fetch.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

namespace lume_unlock::fetch {
namespace {

namespace fs = std::filesystem;

CacheEnvironment environment(std::optional<std::string> own,
                             std::optional<std::string> xdg,
                             std::optional<std::string> home,
                             bool macos) {
  return CacheEnvironment{std::move(own), std::move(xdg), std::move(home), macos};
}

TEST(BlobCache, RootFollowsTheEnvironmentAndThePlatform) {
  EXPECT_EQ(BlobCache::root_for(environment("/c", "/x", "/h", true)).value(), "/c");
  EXPECT_EQ(BlobCache::root_for(environment("/c", "/x", "/h", false)).value(), "/c");
  EXPECT_EQ(BlobCache::root_for(environment(std::nullopt, "/x", "/h", true)).value(),
            "/h/Library/Caches/lume-unlock");
  EXPECT_EQ(BlobCache::root_for(environment(std::nullopt, "/x", "/h", false)).value(),
            "/x/lume-unlock");
  // A relative XDG_CACHE_HOME is ignored, as the XDG base directory spec says.
  EXPECT_EQ(BlobCache::root_for(environment(std::nullopt, "rel", "/h", false)).value(),
            "/h/.cache/lume-unlock");
  EXPECT_EQ(BlobCache::root_for(environment("", std::nullopt, "/h", false)).value(),
            "/h/.cache/lume-unlock");
}

TEST(BlobCache, NoHomeAndNoOverrideNamesTheVariableToSet) {
  auto root = BlobCache::root_for(environment(std::nullopt, std::nullopt, std::nullopt, false));
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().message(), "cannot place the artifact cache: HOME is not set");
  EXPECT_EQ(root.error().hint(),
            "set LUME_UNLOCK_CACHE_DIR to a directory for downloaded artifacts");
  EXPECT_EQ(root.error().category(), ErrorCategory::usage);
}

TEST(BlobCache, PathsAreContentAddressedAndPartialsStablePerSource) {
  BlobCache cache("/cache/");
  const std::string hex(64, 'b');
  EXPECT_EQ(cache.root(), "/cache");
  EXPECT_EQ(cache.blob_path(hex), "/cache/blobs/sha256/" + hex);
  const auto partial = cache.partial_path("https://example.com/a.zip");
  EXPECT_EQ(partial, "/cache/partial/" + util::sha256_hex("https://example.com/a.zip"));
  EXPECT_EQ(partial, cache.partial_path("https://example.com/a.zip"));
  EXPECT_NE(partial, cache.partial_path("https://example.com/b.zip"));
}

TEST(BlobCache, CommitRenamesIntoPlaceAndFindSeesOnlyCommittedBlobs) {
  test::TempDir dir;
  BlobCache cache(dir.path() + "/cache");
  ASSERT_TRUE(cache.prepare().ok());
  const std::string bytes = "model weights";
  const std::string hex = util::sha256_hex(bytes);
  EXPECT_FALSE(cache.find(hex).has_value());

  const std::string partial = cache.partial_path("src");
  ASSERT_TRUE(util::write_file_atomic(partial, bytes).ok());
  chmod(partial.c_str(), 0600);
  auto committed = cache.commit(partial, hex);
  ASSERT_TRUE(committed.ok()) << committed.error().message();
  EXPECT_EQ(committed.value(), cache.blob_path(hex));
  EXPECT_FALSE(fs::exists(partial));
  EXPECT_EQ(cache.find(hex).value(), cache.blob_path(hex));
  EXPECT_EQ(fs::status(committed.value()).permissions() & fs::perms::all, fs::perms(0644));

  // A second commit of the same digest (another process) replaces identical bytes.
  ASSERT_TRUE(util::write_file_atomic(partial, bytes).ok());
  ASSERT_TRUE(cache.commit(partial, hex).ok());
  EXPECT_EQ(util::sha256_file_hex(cache.blob_path(hex)).value(), hex);

  cache.evict(hex);
  EXPECT_FALSE(cache.find(hex).has_value());
  EXPECT_FALSE(cache.find("not-a-digest").has_value());
}

TEST(BlobCache, CommitOfAMissingFileFailsNamingBothPaths) {
  test::TempDir dir;
  BlobCache cache(dir.path());
  ASSERT_TRUE(cache.prepare().ok());
  const std::string hex(64, 'c');
  auto committed = cache.commit(dir.path() + "/missing", hex);
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(committed.error().message(),
            "cannot add '" + dir.path() + "/missing' to the artifact cache as '" +
                cache.blob_path(hex) + "': '" + dir.path() +
                "/missing': No such file or directory");
  EXPECT_EQ(committed.error().category(), ErrorCategory::failure);
  EXPECT_FALSE(cache.find(hex).has_value());
}

} // namespace
} // namespace lume_unlock::fetch
