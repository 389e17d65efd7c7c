#include "util/child_process.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

TEST(ChildProcess, CollectsBothStreamsAndTheExitStatus) {
  auto run = run_child({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(run.value().exit_status, 3);
  EXPECT_EQ(run.value().stdout_text, "out\n");
  EXPECT_EQ(run.value().stderr_text, "err\n");
}

TEST(ChildProcess, ArgumentsReachTheProgramUninterpreted) {
  auto run = run_child({"/bin/sh", "-c", "printf '%s|' \"$@\"", "sh", "a b", "$HOME", ";rm"});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run.value().stdout_text, "a b|$HOME|;rm|");
}

TEST(ChildProcess, LargeOutputOnBothStreamsDoesNotDeadlock) {
  // More than a pipe holds (64 KiB) on each stream, written alternately.
  auto run =
      run_child({"/bin/sh",
                 "-c",
                 "i=0; while [ $i -lt 2000 ]; do echo 0123456789012345678901234567890123456789"
                 "0123456789; echo 0123456789012345678901234567890123456789012345678 >&2; "
                 "i=$((i+1)); done"});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run.value().exit_status, 0);
  EXPECT_EQ(run.value().stdout_text.size(), 2000U * 51);
  EXPECT_EQ(run.value().stderr_text.size(), 2000U * 50);
}

TEST(ChildProcess, StandardInputIsEmpty) {
  auto run = run_child({"/bin/cat"});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run.value().exit_status, 0);
  EXPECT_EQ(run.value().stdout_text, "");
}

TEST(ChildProcess, AKilledChildReportsTheSignalAsAShellDoes) {
  auto run = run_child({"/bin/sh", "-c", "kill -9 $$"});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run.value().exit_status, 128 + 9);
}

TEST(ChildProcess, AMissingProgramIsAnErrorNamingIt) {
  auto run = run_child({"/nonexistent/lume-unlock"});
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().message(),
            "cannot run '/nonexistent/lume-unlock': No such file or directory");
}

} // namespace
} // namespace lume_unlock::util
