#include "apply/probe.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::apply {
namespace {

InstalledShim linux_shim() {
  InstalledShim shim;
  shim.bundle_version = "0.1.0";
  shim.platform = "linux-x86_64";
  shim.inject_env = "LD_PRELOAD";
  const std::string dir = "/h/Library/Application Support/LumeUnlock/shim/abc";
  shim.shim = {dir + "/liblume-unlock-shim.so", std::string(64, 'a')};
  shim.support = {{dir + "/libMetalEmu.so", std::string(64, 'b')}};
  shim.probe = InstalledFile{"/h/Library/Application Support/LumeUnlock/bin/lume-unlock-probe",
                             std::string(64, 'c')};
  return shim;
}

TEST(ProbeRun, LinuxCommandPreloadsTheShimByNameFromItsDirectory) {
  auto command = probe_command(linux_shim(), {1009, 65536}, {{"LUME_UNLOCK_DISABLE", "1"}});
  ASSERT_TRUE(command.ok());
  const std::string dir = "'/h/Library/Application Support/LumeUnlock/shim/abc'";
  const std::string probe =
      "'/h/Library/Application Support/LumeUnlock/bin/lume-unlock-probe' '--json'";
  EXPECT_EQ(command.value(),
            "cd / && LD_LIBRARY_PATH=" + dir + " " + probe +
                "; echo '--- lume-unlock probe: unlocked ---'; LD_LIBRARY_PATH=" + dir +
                " LD_PRELOAD='liblume-unlock-shim.so' LUME_METAL_APPLE_FAMILY_MAX='1009' "
                "LUME_METAL_MAX_THREADGROUP_MEMORY='65536' LUME_UNLOCK_DISABLE='1' " +
                probe);
}

TEST(ProbeRun, DarwinCommandInsertsTheShimByPath) {
  InstalledShim shim = linux_shim();
  shim.platform = "darwin-arm64";
  shim.inject_env = "DYLD_INSERT_LIBRARIES";
  shim.support.clear();
  auto command = probe_command(shim, {1007, 32768});
  ASSERT_TRUE(command.ok());
  EXPECT_NE(
      command.value().find(
          "DYLD_INSERT_LIBRARIES='/h/Library/Application "
          "Support/LumeUnlock/shim/abc/liblume-unlock-shim.so' LUME_METAL_APPLE_FAMILY_MAX='1007'"),
      std::string::npos)
      << command.value();
  EXPECT_EQ(command.value().find("LD_LIBRARY_PATH"), std::string::npos);
}

TEST(ProbeRun, NoProbeInTheBundleIsAUsageError) {
  InstalledShim shim = linux_shim();
  shim.probe.reset();
  auto command = probe_command(shim, {});
  ASSERT_FALSE(command.ok());
  EXPECT_EQ(command.error().category(), ErrorCategory::usage);
}

TEST(ProbeRun, OutputSplitsIntoTheTwoDocuments) {
  guest::CommandResult result;
  result.exit_status = 0;
  result.stdout_text = "{\"a\":1}\n--- lume-unlock probe: unlocked ---\n{\"a\":2}\n";
  auto run = parse_probe_output(result);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run.value().stock, (nlohmann::json{{"a", 1}}));
  EXPECT_EQ(run.value().unlocked, (nlohmann::json{{"a", 2}}));
}

TEST(ProbeRun, AMissingDocumentNamesTheRunAndItsStderr) {
  guest::CommandResult result;
  result.exit_status = 127;
  result.stdout_text = "{\"a\":1}\n--- lume-unlock probe: unlocked ---\n";
  result.stderr_text = "libMetalEmu.so: cannot open shared object file";
  auto run = parse_probe_output(result);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().category(), ErrorCategory::guest);
  EXPECT_EQ(run.error().message(),
            "probe in the guest: the unlocked run printed no JSON document (stderr: "
            "libMetalEmu.so: cannot open shared object file)");
}

} // namespace
} // namespace lume_unlock::apply
