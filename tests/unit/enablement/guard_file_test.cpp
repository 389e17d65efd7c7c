#include "enablement/enablement_plan.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock::enablement {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

EnablementEntry entry(const std::string& name, const std::string& program, bool agent) {
  EnablementEntry e;
  e.name = name;
  e.program = program;
  e.agent = agent;
  e.keep_alive = agent;
  return e;
}

TEST(GuardFile, ListsEveryProgramSortedAndUnique) {
  EnablementList list;
  list.entries = {entry("server", "/opt/llama/bin/llama-server", true),
                  entry("bench", "/opt/llama/bin/llama-bench", false),
                  entry("server-2", "/opt/llama/bin/llama-server", true),
                  entry("app", "/Applications/My App.app/Contents/MacOS/My App", true)};
  EXPECT_EQ(
      render_guard_file(list),
      "# lume-unlock: executables the Metal capability shim may enable (LUME_UNLOCK_ENABLEMENT).\n"
      "# Generated from enablement.json; change it with 'lume-unlock allow add/remove', not by "
      "hand.\n"
      "/Applications/My App.app/Contents/MacOS/My App\n"
      "/opt/llama/bin/llama-bench\n"
      "/opt/llama/bin/llama-server\n");
}

TEST(GuardFile, ListsTheResolvedPathNeverTheLink) {
  // Homebrew's bin/ holds links into the Cellar; the shim compares the executable's realpath.
  EnablementEntry server = entry("server", "/opt/homebrew/bin/llama-server", true);
  server.resolved_program = "/opt/homebrew/Cellar/llama.cpp/4000/bin/llama-server";
  EnablementEntry old = entry("old", "/opt/old/bin/tool", false); // applied before resolution
  EnablementList list;
  list.entries = {server, old};
  const std::string text = render_guard_file(list);
  EXPECT_THAT(text, HasSubstr("\n/opt/homebrew/Cellar/llama.cpp/4000/bin/llama-server\n"));
  EXPECT_THAT(text, Not(HasSubstr("/opt/homebrew/bin/llama-server")));
  EXPECT_THAT(text, HasSubstr("\n/opt/old/bin/tool\n"));
}

TEST(GuardFile, EmptyListIsOnlyTheHeader) {
  const std::string text = render_guard_file(EnablementList{});
  EXPECT_THAT(text, Not(HasSubstr("\n/")));
  EXPECT_EQ(text.front(), '#');
}

TEST(GuardFile, OrderOfEntriesDoesNotMatter) {
  EnablementList a;
  a.entries = {entry("a", "/b", true), entry("b", "/a", true)};
  EnablementList b;
  b.entries = {a.entries[1], a.entries[0]};
  EXPECT_EQ(render_guard_file(a), render_guard_file(b));
}

} // namespace
} // namespace lume_unlock::enablement
