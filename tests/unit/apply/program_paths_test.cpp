// Resolving the programs of an enablement list to their real paths, over a scripted session.
#include "apply/programs.hpp"
#include "unit/guest/scripted_session.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::apply {
namespace {

using test::ScriptedSession;

enablement::EnablementEntry entry(const std::string& name, const std::string& program) {
  enablement::EnablementEntry e;
  e.name = name;
  e.program = program;
  return e;
}

TEST(ProgramPaths, OneCommandQuotesEveryProgramAndAsksRealpath) {
  auto command = resolve_command({"/opt/homebrew/bin/llama-server", "/Users/o'brien/x y/$(z)"});
  ASSERT_TRUE(command.ok()) << command.error().message();
  EXPECT_NE(command.value().find("realpath \"$2\""), std::string::npos);
  EXPECT_NE(command.value().find("\nr 0 '/opt/homebrew/bin/llama-server'\n"), std::string::npos);
  EXPECT_NE(command.value().find("\nr 1 '/Users/o'\\''brien/x y/$(z)'\n"), std::string::npos)
      << command.value();
  // Nothing beyond POSIX sh and realpath: no lipo or codesign (Xcode's tools).
  EXPECT_EQ(command.value().find("lipo"), std::string::npos);
  EXPECT_EQ(command.value().find("codesign"), std::string::npos);
}

TEST(ProgramPaths, ParsesEveryStateInTheProgramsOrder) {
  auto parsed = parse_resolution("1 missing\n0 real /opt/Cellar/x y/bin/x\n3 unresolvable\n"
                                 "2 dangling\n4 not-executable /etc/x y\n",
                                 5);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  const auto& paths = parsed.value();
  EXPECT_EQ(paths[0].state, ProgramPath::State::resolved);
  EXPECT_EQ(paths[0].real_path, "/opt/Cellar/x y/bin/x");
  EXPECT_TRUE(paths[0].executable);
  EXPECT_EQ(paths[4].state, ProgramPath::State::resolved);
  EXPECT_EQ(paths[4].real_path, "/etc/x y");
  EXPECT_FALSE(paths[4].executable);
  EXPECT_EQ(paths[1].state, ProgramPath::State::missing);
  EXPECT_EQ(paths[2].state, ProgramPath::State::dangling);
  EXPECT_EQ(paths[3].state, ProgramPath::State::unresolvable);
}

TEST(ProgramPaths, MalformedIncompleteOrNoRealpathIsAGuestError) {
  const std::pair<std::string, std::string> cases[] = {
      {"0 real /a\n", "the guest answered for 1 of 2 programs"},
      {"0 real /a\n0 real /a\n", "unexpected output line '0 real /a'"},
      {"0 real /a\n1 real relative\n", "unexpected output line '1 real relative'"},
      {"0 real /a\n7 missing\n", "unexpected output line '7 missing'"},
      {"0 real /a\n1 real /new\nline\n", "unexpected output line 'line'"},
      {"no-realpath\n", "the guest has no realpath command"},
  };
  for (const auto& [output, why] : cases) {
    auto parsed = parse_resolution(output, 2);
    ASSERT_FALSE(parsed.ok()) << output;
    EXPECT_EQ(parsed.error().category(), ErrorCategory::guest) << output;
    EXPECT_EQ(parsed.error().why(), why) << output;
  }
}

TEST(ProgramPaths, ResolveEntriesSetsEveryRealPathWithOneCommandPerList) {
  ScriptedSession session;
  session.answers.push_back(
      {0,
       "0 real /opt/homebrew/Cellar/llama.cpp/4000/bin/llama-server\n1 real /usr/bin/true\n",
       ""});
  enablement::EnablementList list{{entry("a", "/opt/homebrew/bin/llama-server"),
                                   entry("b", "/bin/true"),
                                   entry("c", "/opt/homebrew/bin/llama-server")}};
  auto resolved = resolve_entries(session, list);
  ASSERT_TRUE(resolved.ok()) << resolved.error().message();
  ASSERT_EQ(session.commands.size(), 1u);
  EXPECT_EQ(session.commands[0].find("\nr 2 "), std::string::npos) << "each program once";
  const auto& entries = resolved.value().entries;
  EXPECT_EQ(entries[0].resolved_program, "/opt/homebrew/Cellar/llama.cpp/4000/bin/llama-server");
  EXPECT_EQ(entries[1].resolved_program, "/usr/bin/true");
  EXPECT_EQ(entries[2].resolved_program, entries[0].resolved_program);
  EXPECT_EQ(entries[0].program, "/opt/homebrew/bin/llama-server") << "the written path stays";

  ScriptedSession none;
  EXPECT_TRUE(resolve_entries(none, {}).ok());
  EXPECT_TRUE(none.commands.empty()) << "an empty list needs no command";
}

TEST(ProgramPaths, AProgramThatDoesNotResolveNamesTheEntry) {
  const std::pair<std::string, std::string> cases[] = {
      {"0 missing\n", "program '/opt/x' does not exist in the guest"},
      {"0 dangling\n",
       "program '/opt/x' is a symbolic link to a file that does not exist in the guest"},
      {"0 unresolvable\n",
       "program '/opt/x' cannot be resolved to a real path in the guest (realpath failed: a link "
       "loop, or a directory that may not be searched)"},
  };
  for (const auto& [output, why] : cases) {
    ScriptedSession session;
    session.answers.push_back({0, output, ""});
    auto resolved = resolve_entries(session, {{entry("x", "/opt/x")}});
    ASSERT_FALSE(resolved.ok()) << output;
    EXPECT_EQ(resolved.error().category(), ErrorCategory::usage) << output;
    EXPECT_EQ(resolved.error().what_failed(), "enablement entry 'x'");
    EXPECT_EQ(resolved.error().why(), why);
  }
  ScriptedSession session;
  session.answers.push_back({0, "0 not-executable /etc/x\n", ""});
  auto plain = resolve_entries(session, {{entry("x", "/opt/x")}});
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().message(),
            "enablement entry 'x': program '/opt/x' is not an executable file in the guest");
  // An entry applied before, unchanged, was checked then: only new or changed ones are refused.
  enablement::EnablementEntry applied = entry("x", "/opt/x");
  applied.resolved_program = "/etc/x";
  session.answers.push_back({0, "0 not-executable /etc/x\n", ""});
  const enablement::EnablementList before{{applied}};
  EXPECT_TRUE(resolve_entries(session, {{entry("x", "/opt/x")}}, &before).ok());

  session.answers.push_back({0, "0 real /a/../b\n", ""});
  auto odd = resolve_entries(session, {{entry("x", "/opt/x")}});
  ASSERT_FALSE(odd.ok()) << "a real path that breaks the program rules is refused";
  EXPECT_NE(odd.error().why().find("resolved_program: "), std::string::npos) << odd.error().why();
}

} // namespace
} // namespace lume_unlock::apply
