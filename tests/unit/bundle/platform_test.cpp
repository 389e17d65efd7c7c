#include "bundle/bundle.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::bundle {
namespace {

BundleManifest two_platforms() {
  BundleManifest m;
  m.version = "0.1.0";
  m.platforms["darwin-arm64"] = PlatformEntry{
      "DYLD_INSERT_LIBRARIES", {"darwin-arm64/s.dylib", std::string(64, 'a')}, std::nullopt, {}};
  m.platforms["linux-x86_64"] =
      PlatformEntry{"LD_PRELOAD", {"linux-x86_64/s.so", std::string(64, 'b')}, std::nullopt, {}};
  return m;
}

TEST(BundlePlatform, GuestsMapToPlatformNames) {
  struct Case {
    const char* system;
    const char* arch;
    const char* platform;
  };
  const Case cases[] = {
      {"Darwin", "arm64", "darwin-arm64"},
      {"Darwin", "arm64e", "darwin-arm64e"},
      {"Linux", "x86_64", "linux-x86_64"},
      {"Linux", "aarch64", "linux-arm64"},
      {"Linux", "amd64", "linux-x86_64"},
      {"Darwin", "x86_64", "darwin-x86_64"},
  };
  for (const auto& c : cases) {
    auto name = guest_platform_name(c.system, c.arch);
    ASSERT_TRUE(name.ok()) << c.system << " " << c.arch;
    EXPECT_EQ(name.value(), c.platform);
  }
}

TEST(BundlePlatform, SelectsTheMatchingEntry) {
  auto selected = select_platform(two_platforms(), "Darwin", "arm64");
  ASSERT_TRUE(selected.ok()) << selected.error().message();
  EXPECT_EQ(selected.value().name, "darwin-arm64");
  EXPECT_EQ(selected.value().entry.inject_env, "DYLD_INSERT_LIBRARIES");
  auto linux_guest = select_platform(two_platforms(), "Linux", "x86_64");
  ASSERT_TRUE(linux_guest.ok());
  EXPECT_EQ(linux_guest.value().entry.inject_env, "LD_PRELOAD");
}

TEST(BundlePlatform, MissingPlatformListsWhatTheBundleHas) {
  auto selected = select_platform(two_platforms(), "Darwin", "arm64e");
  ASSERT_FALSE(selected.ok());
  EXPECT_EQ(selected.error().message(),
            "no shim for guest 'Darwin arm64e' (darwin-arm64e): bundle 0.1.0 has darwin-arm64, "
            "linux-x86_64");
  EXPECT_EQ(selected.error().hint(), "use a bundle built with a darwin-arm64e entry");
  EXPECT_EQ(selected.error().category(), ErrorCategory::verification);
}

TEST(BundlePlatform, UnknownSystemIsRefusedWithTheBundlesPlatforms) {
  auto selected = select_platform(two_platforms(), "FreeBSD", "amd64");
  ASSERT_FALSE(selected.ok());
  EXPECT_EQ(selected.error().message(),
            "unsupported guest 'FreeBSD amd64': the shim runs in macOS (Darwin) guests, and in "
            "Linux for tests");
  EXPECT_EQ(selected.error().hint(), "this bundle has darwin-arm64, linux-x86_64");
}

} // namespace
} // namespace lume_unlock::bundle
