#include "guest/guest_layout.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::guest {
namespace {

const std::string k_sha(64, 'a');

TEST(GuestLayout, EveryPathComesFromHomeAndTheShimDigest) {
  const auto layout = GuestLayout::make("/Users/Jane Doe/", k_sha);
  ASSERT_TRUE(layout.ok()) << layout.error().message();
  const GuestLayout& l = layout.value();
  const std::string support = "/Users/Jane Doe/Library/Application Support/LumeUnlock";
  EXPECT_EQ(l.home(), "/Users/Jane Doe");
  EXPECT_EQ(l.support_dir(), support);
  EXPECT_EQ(l.shim_dir(), support + "/shim/" + k_sha);
  EXPECT_EQ(l.shim_path(), support + "/shim/" + k_sha + "/liblume-unlock-shim.dylib");
  EXPECT_EQ(l.probe_path(), support + "/bin/lume-unlock-probe");
  EXPECT_EQ(l.guard_file_path(), support + "/enabled-executables");
  EXPECT_EQ(l.enablement_json_path(), support + "/enablement.json");
  EXPECT_EQ(l.staging_dir(), support + "/staging");
  EXPECT_EQ(l.launch_agents_dir(), "/Users/Jane Doe/Library/LaunchAgents");
  EXPECT_EQ(l.agent_plist_path("llama-server"),
            "/Users/Jane Doe/Library/LaunchAgents/dev.lume-unlock.llama-server.plist");
  EXPECT_EQ(l.logs_dir(), "/Users/Jane Doe/Library/Logs/LumeUnlock");
  EXPECT_EQ(l.stdout_log_path("x"), "/Users/Jane Doe/Library/Logs/LumeUnlock/x.stdout.log");
  EXPECT_EQ(l.stderr_log_path("x"), "/Users/Jane Doe/Library/Logs/LumeUnlock/x.stderr.log");
}

TEST(GuestLayout, LinuxGuestsUseTheirShimFileName) {
  const auto layout = GuestLayout::make("/home/sim", k_sha, "liblume-unlock-shim.so");
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout.value().shim_path(),
            "/home/sim/Library/Application Support/LumeUnlock/shim/" + k_sha +
                "/liblume-unlock-shim.so");
}

TEST(GuestLayout, RootHomeDoesNotDoubleTheSlash) {
  const auto layout = GuestLayout::make("/", k_sha);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout.value().launch_agents_dir(), "/Library/LaunchAgents");
}

TEST(GuestLayout, RejectsBadInputs) {
  struct Case {
    std::string home, sha, file, message;
  };
  const Case cases[] = {
      {"",
       k_sha,
       "liblume-unlock-shim.dylib",
       "guest layout: home directory '' is not an absolute path"},
      {"Users/x",
       k_sha,
       "liblume-unlock-shim.dylib",
       "guest layout: home directory 'Users/x' is not an absolute path"},
      {"/Users/x\n",
       k_sha,
       "liblume-unlock-shim.dylib",
       "guest layout: home directory contains a control character (0x0a at byte 8); only tab is "
       "allowed"},
      {"/Users/x",
       "ABC",
       "liblume-unlock-shim.dylib",
       "guest layout: shim sha256 'ABC' is not 64 lower-case hex characters"},
      {"/Users/x",
       k_sha,
       "../x.dylib",
       "guest layout: shim file name '../x.dylib' is not a plain file name"},
      {"/Users/x", k_sha, "", "guest layout: shim file name '' is not a plain file name"},
  };
  for (const Case& c : cases) {
    const auto layout = GuestLayout::make(c.home, c.sha, c.file);
    ASSERT_FALSE(layout.ok()) << c.message;
    EXPECT_EQ(layout.error().message(), c.message);
  }
}

TEST(GuestLayout, LabelsAndPlistFileNames) {
  EXPECT_EQ(agent_label("llama-server"), "dev.lume-unlock.llama-server");
  EXPECT_EQ(agent_plist_file_name("x"), "dev.lume-unlock.x.plist");
  EXPECT_EQ(entry_name_from_plist_file_name("dev.lume-unlock.llama-server.plist"), "llama-server");
  EXPECT_EQ(entry_name_from_plist_file_name("dev.lume-unlock..plist"), "");
  EXPECT_EQ(entry_name_from_plist_file_name("com.apple.x.plist"), "");
  EXPECT_EQ(entry_name_from_plist_file_name("dev.lume-unlock.x.plist.bak"), "");
}

} // namespace
} // namespace lume_unlock::guest
