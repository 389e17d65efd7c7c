#include "support/temp_dir.hpp"
#include "transfer/shim_bundle.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace lume_unlock::transfer {
namespace {

TEST(BundleLocation, TellsRegistryReferencesFromPaths) {
  struct Case {
    const char* location;
    LocationKind kind;
  };
  const std::vector<Case> cases = {
      // Pinned references, with or without a tag or an explicit registry.
      {"ghcr.io/acme/lume-unlock-shim@sha256:aaaa", LocationKind::reference},
      {"127.0.0.1:5000/acme/shim:0.1.0@sha256:aaaa", LocationKind::reference},
      {"acme/shim@sha256:aaaa", LocationKind::reference},
      // Unpinned references: still references, so the user hears "pin it by digest".
      {"ghcr.io/acme/shim:0.1.0", LocationKind::reference},
      {"acme/shim:0.1.0", LocationKind::reference},
      {"ghcr.io/acme/shim", LocationKind::reference},
      {"localhost/shim", LocationKind::reference},
      {"localhost:5000/acme/shim", LocationKind::reference},
      // Paths that do not exist stay paths ("it does not exist").
      {"/nonexistent/shim-bundle", LocationKind::path},
      {"./shim-bundle", LocationKind::path},
      {"../build/shim-bundle", LocationKind::path},
      {"~/bundles/x", LocationKind::path},
      {"build/shim-bundle", LocationKind::path},
      {"shim-bundle", LocationKind::path},
      {"lume-unlock-shim-bundle-0.1.0.tar.gz", LocationKind::path},
      {"dist/lume-unlock-shim-bundle-0.1.0.tgz", LocationKind::path},
      {"", LocationKind::path},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(location_kind(c.location), c.kind) << c.location;
  }
}

TEST(BundleLocation, AnExistingPathWinsOverTheReferenceReading) {
  test::TempDir dir;
  const std::string looks_like_ref = "ghcr.io/acme/shim:0.1.0";
  std::filesystem::create_directories(dir / looks_like_ref);
  const std::string before = std::filesystem::current_path().string();
  ASSERT_EQ(::chdir(dir.path().c_str()), 0);
  const LocationKind kind = location_kind(looks_like_ref);
  ASSERT_EQ(::chdir(before.c_str()), 0);
  EXPECT_EQ(kind, LocationKind::path);
}

TEST(BundleLocation, TheFlagComesBeforeTheRecipeAndTheRecipeBeforeTheBuildTree) {
  unsetenv("LUME_UNLOCK_BUNDLE");
  const std::string ref = "ghcr.io/acme/shim@sha256:" + std::string(64, 'a');
  EXPECT_EQ(locate_bundle(std::string("flag"), ref).source, "--bundle");
  const BundleLocation from_recipe = locate_bundle(std::nullopt, ref);
  EXPECT_EQ(from_recipe.path, ref);
  EXPECT_EQ(from_recipe.source, "recipe shim.bundle");
  EXPECT_EQ(locate_bundle(std::nullopt, std::nullopt).source, "build tree");
}

TEST(BundleLocation, TheEnvironmentComesBeforeTheBuildTree) {
  setenv("LUME_UNLOCK_BUNDLE", "/somewhere/shim-bundle", 1);
  const BundleLocation located = locate_bundle(std::nullopt, std::nullopt);
  unsetenv("LUME_UNLOCK_BUNDLE");
  EXPECT_EQ(located.path, "/somewhere/shim-bundle");
  EXPECT_EQ(located.source, "$LUME_UNLOCK_BUNDLE");
}

TEST(BundleLocation, TheInstalledBundleIsFoundBesideTheExecutablesBinDirectory) {
  test::TempDir prefix;
  const std::string executable = prefix / "bin/lume-unlock";
  std::filesystem::create_directories(prefix / "share/lume-unlock/shim-bundle");
  // A directory without bundle.json is not a bundle.
  EXPECT_EQ(installed_bundle_beside(executable), std::nullopt);
  std::ofstream(prefix / "share/lume-unlock/shim-bundle/bundle.json") << "{}";
  EXPECT_EQ(installed_bundle_beside(executable), prefix / "share/lume-unlock/shim-bundle");
  // Another prefix has nothing installed.
  EXPECT_EQ(installed_bundle_beside(prefix / "elsewhere/bin/lume-unlock"), std::nullopt);
}

TEST(BundleLocation, AnUnpinnedReferenceIsAUsageErrorSayingHowToPinIt) {
  oci::RegistryClient registry; // never contacted: the digest is checked first
  auto loaded = load_located_bundle({"ghcr.io/acme/shim:0.1.0", "recipe shim.bundle"}, registry);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().category(), ErrorCategory::usage);
  EXPECT_EQ(loaded.error().message(),
            "shim bundle 'ghcr.io/acme/shim:0.1.0' (from recipe shim.bundle): it is not a local "
            "path, and a registry reference must be pinned by digest");
  EXPECT_EQ(loaded.error().hint(),
            "pin it by digest: lume-unlock resolve ghcr.io/acme/shim:0.1.0 prints it; write "
            "ghcr.io/acme/shim:0.1.0@sha256:<hex>");
  EXPECT_EQ(registry.request_count(), 0u);
}

TEST(BundleLocation, AMissingPathSaysHowToBuildOrNameABundle) {
  oci::RegistryClient registry;
  auto loaded = load_located_bundle({"build/no-such-bundle", "--bundle"}, registry);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().category(), ErrorCategory::usage);
  EXPECT_EQ(loaded.error().message(),
            "shim bundle 'build/no-such-bundle' (from --bundle): it does not exist");
  EXPECT_EQ(registry.request_count(), 0u);
}

} // namespace
} // namespace lume_unlock::transfer
