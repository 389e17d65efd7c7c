#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace lume_unlock::test {
namespace {

TEST(ChildProcess, CapturesStdoutAndStopsTheProcess) {
  TempDir dir;
  ChildProcess child({{"/bin/sh", "-c", "echo ready $GREETING; exec sleep 30"},
                      {{"GREETING", "hi"}},
                      dir.path(),
                      "sleeper",
                      ""});
  auto line = child.wait_for_stdout_line(std::chrono::seconds(5));
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(*line, "ready hi");
  EXPECT_TRUE(child.running());
  EXPECT_EQ(child.stop(), -15); // SIGTERM
  EXPECT_FALSE(child.running());
}

TEST(RunCommand, ReturnsStatusOutputsAndFeedsStdin) {
  auto r = run_command({"/bin/sh", "-c", "cat; echo err >&2; exit 3"}, {}, "input");
  EXPECT_EQ(r.exit_status, 3);
  EXPECT_EQ(r.stdout_text, "input");
  EXPECT_EQ(r.stderr_text, "err\n");
}

TEST(TempDir, IsRemovedOnDestruction) {
  std::string path;
  {
    TempDir dir;
    path = dir.path();
    EXPECT_TRUE(std::filesystem::is_directory(path));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Ports, FreePortIsNotListening) {
  int port = free_loopback_port();
  EXPECT_GT(port, 0);
  EXPECT_FALSE(wait_for_tcp(port, std::chrono::milliseconds(50)));
}

} // namespace
} // namespace lume_unlock::test
