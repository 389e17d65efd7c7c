#include "support/cli_run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <vector>

namespace lume_unlock::cli {
namespace {

test::CliRun run(const std::vector<std::string>& args) {
  return test::run_lume_unlock(args);
}

TEST(Cli, VersionPrintsTheVersion) {
  auto r = run({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("lume-unlock 0.", 0), 0u) << r.out;
}

TEST(Cli, VersionNamesTheBundleItWouldUseAndSaysWhenItCannotReadIt) {
  setenv("LUME_UNLOCK_BUNDLE", "/nonexistent/shim-bundle", 1);
  auto r = run({"--version"});
  unsetenv("LUME_UNLOCK_BUNDLE");
  EXPECT_EQ(r.exit_code, 0);
  const std::string line =
      "\nshim bundle /nonexistent/shim-bundle ($LUME_UNLOCK_BUNDLE): unreadable: ";
  EXPECT_NE(r.out.find(line), std::string::npos) << r.out;
}

TEST(Cli, CompletionsAreHiddenAndRefuseAnUnknownShell) {
  EXPECT_EQ(run({"--help"}).out.find("completions"), std::string::npos);
  auto bash = run({"completions", "bash"});
  EXPECT_EQ(bash.exit_code, 0);
  EXPECT_NE(bash.out.find("complete -F _lume_unlock lume-unlock\n"), std::string::npos);
  auto zsh = run({"completions", "zsh"});
  EXPECT_EQ(zsh.out.rfind("#compdef lume-unlock\n", 0), 0u) << zsh.out;
  auto fish = run({"completions", "fish"});
  EXPECT_EQ(fish.exit_code, 2);
  EXPECT_NE(fish.err.find("no completion for shell 'fish'"), std::string::npos) << fish.err;
}

TEST(Cli, HelpListsTheGlobalOptions) {
  auto r = run({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* option :
       {"--lume-url", "--state-dir", "--json", "--quiet", "--verbose", "--version"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option << " missing from:\n" << r.out;
  }
}

TEST(Cli, UnknownCommandIsBadUsage) {
  auto r = run({"nonsense"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "lume-unlock: error: unknown command 'nonsense'\n"
            "hint: run 'lume-unlock --help' for the list of commands\n");
}

TEST(Cli, UnknownCommandAsJson) {
  auto r = run({"--json", "nonsense"});
  EXPECT_EQ(r.exit_code, 2);
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["error"]["category"], "usage");
  EXPECT_EQ(doc["error"]["exit_code"], 2);
  EXPECT_EQ(doc["error"]["message"], "unknown command 'nonsense'");
}

TEST(Cli, UnknownFlagIsBadUsage) {
  auto r = run({"--no-such-flag"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("lume-unlock: error: bad usage: "), std::string::npos) << r.err;
}

TEST(Cli, QuietAndVerboseExcludeEachOther) {
  auto r = run({"--quiet", "--verbose"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(Cli, NoCommandIsBadUsage) {
  auto r = run({});
  EXPECT_EQ(r.exit_code, 2);
}

} // namespace
} // namespace lume_unlock::cli
