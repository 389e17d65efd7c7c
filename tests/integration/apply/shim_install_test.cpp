// install_shim against guest-sim: content-addressed install, idempotence, command counts.
#include "integration/apply/apply_fixture.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace lume_unlock::apply {
namespace {

namespace fs = std::filesystem;
using test::slurp;

class ShimInstall : public test::SimGuestTest {
protected:
  test::TempDir work{"lume-unlock-bundle"};
};

TEST_F(ShimInstall, InstallsThePlatformEntryOnceThenChangesNothing) {
  const auto bundle = test::stand_in_bundle(work.path(), "shim bytes v1");
  auto first = install_shim(*session, bundle, facts);
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_TRUE(first.value().changed);
  EXPECT_EQ(first.value().platform, "linux-x86_64");
  // observe + upload (+ mkdir of the staging root) + extract/verify/install
  EXPECT_EQ(first.value().commands, 4u);

  const auto& entry = bundle.manifest().platforms.at("linux-x86_64");
  const std::string support = facts.home + "/Library/Application Support/LumeUnlock";
  const std::string shim_dir = support + "/shim/" + entry.shim.sha256;
  EXPECT_EQ(slurp(shim_dir + "/liblume-unlock-shim.so"), "shim bytes v1");
  EXPECT_EQ(slurp(shim_dir + "/libMetalEmu.so"), "support");
  EXPECT_EQ(slurp(support + "/bin/lume-unlock-probe"), "#!/bin/sh\necho probe\n");
  EXPECT_EQ(slurp(support + "/bin/libMetalEmu.so"), "support");
  EXPECT_EQ(slurp(installed_shim_record_path(facts.home)),
            render_installed_shim(first.value().installed));
  EXPECT_EQ(first.value().installed.shim.path, shim_dir + "/liblume-unlock-shim.so");
  EXPECT_EQ(first.value().installed.inject_env, "LD_PRELOAD");

  auto second = install_shim(*session, bundle, facts);
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_FALSE(second.value().changed);
  EXPECT_EQ(second.value().commands, 1u);
  EXPECT_EQ(second.value().installed, first.value().installed);
}

TEST_F(ShimInstall, NewShimGoesToANewDirectoryAndRepairsAChangedFile) {
  const auto v1 = test::stand_in_bundle(work.path(), "shim bytes v1");
  auto first = install_shim(*session, v1, facts);
  ASSERT_TRUE(first.ok()) << first.error().message();
  test::TempDir other{"lume-unlock-bundle2"};
  const auto v2 = test::stand_in_bundle(other.path(), "shim bytes v2");
  auto second = install_shim(*session, v2, facts);
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_TRUE(second.value().changed);
  EXPECT_NE(second.value().installed.shim.path, first.value().installed.shim.path);
  EXPECT_TRUE(fs::exists(first.value().installed.shim.path)); // the old version stays
  EXPECT_EQ(slurp(second.value().installed.shim.path), "shim bytes v2");

  guest_sh("printf damaged > '" + second.value().installed.probe->path + "'");
  auto repaired = install_shim(*session, v2, facts);
  ASSERT_TRUE(repaired.ok()) << repaired.error().message();
  EXPECT_TRUE(repaired.value().changed);
  EXPECT_EQ(slurp(second.value().installed.probe->path), "#!/bin/sh\necho probe\n");
}

TEST_F(ShimInstall, BundleWithoutTheGuestsPlatformIsRefusedBeforeAnyCommand) {
  const auto bundle = test::stand_in_bundle(work.path(), "mach-o", "darwin-arm64");
  const std::uint64_t before = session->command_count();
  auto result = install_shim(*session, bundle, facts);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().category(), ErrorCategory::verification);
  EXPECT_NE(result.error().message().find("darwin-arm64"), std::string::npos)
      << result.error().message();
  EXPECT_EQ(session->command_count(), before);
}

} // namespace
} // namespace lume_unlock::apply
