// The pure parts of bake: the lock file it writes, and the check that a pushed manifest is the
// push of a given VM directory.
#include "pipeline/bake.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::pipeline {
namespace {

recipe::BakedImage baked(char fill) {
  recipe::BakedImage b;
  b.reference = "r/o/n:1";
  b.digest = "sha256:" + std::string(64, fill);
  b.pinned = "r/o/n@" + b.digest;
  b.pushed_at = "2026-12-03T06:00:00Z";
  b.recipe_sha256 = std::string(64, 'b');
  return b;
}

recipe::LockedReference pin(char fill) {
  return {"source.image",
          "r/o/src:latest",
          "sha256:" + std::string(64, fill),
          "r/o/src@sha256:" + std::string(64, fill),
          std::nullopt,
          std::nullopt};
}

TEST(LockAfterBake, StartsALockPinningTheSourceWhenThereIsNone) {
  auto lock =
      lock_after_bake(std::nullopt, "x.yaml", std::string(64, 'b'), pin('c'), baked('a'), "now");
  EXPECT_EQ(lock.recipe_path, "x.yaml");
  EXPECT_EQ(lock.recipe_sha256, std::string(64, 'b'));
  ASSERT_EQ(lock.references.size(), 1u);
  EXPECT_EQ(lock.references[0], pin('c'));
  ASSERT_EQ(lock.baked.size(), 1u);
  EXPECT_EQ(lock.created_at, "now");
}

TEST(LockAfterBake, KeepsTheReferencesOfALockOfTheSameRecipeAndAppends) {
  recipe::LockFile existing;
  existing.recipe_path = "x.yaml";
  existing.recipe_sha256 = std::string(64, 'b');
  existing.references = {pin('d')};
  existing.baked = {baked('1')};
  existing.created_at = "then";
  auto lock =
      lock_after_bake(existing, "x.yaml", std::string(64, 'b'), pin('c'), baked('2'), "now");
  EXPECT_EQ(lock.references, std::vector<recipe::LockedReference>{pin('d')});
  EXPECT_EQ(lock.baked, (std::vector<recipe::BakedImage>{baked('1'), baked('2')}));
  EXPECT_EQ(lock.created_at, "then");
}

TEST(LockAfterBake, RepinsAStaleLockButKeepsEarlierBakes) {
  recipe::LockFile existing;
  existing.recipe_sha256 = std::string(64, 'e');
  existing.references = {pin('d')};
  existing.baked = {baked('1')};
  auto lock =
      lock_after_bake(existing, "x.yaml", std::string(64, 'b'), std::nullopt, baked('2'), "now");
  EXPECT_EQ(lock.recipe_sha256, std::string(64, 'b'));
  EXPECT_TRUE(lock.references.empty()); // --from: nothing of the recipe to pin
  EXPECT_EQ(lock.baked.size(), 2u);
}

} // namespace
} // namespace lume_unlock::pipeline
