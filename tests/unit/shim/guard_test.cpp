#include "policy/policy.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::policy {
namespace {

const std::string k_exe = "/Users/lume/Library/Application Support/llama/bin/llama-server";

struct GuardCase {
  const char* name;
  std::string text;
  bool listed;
};

TEST(GuardLists, ParsesOneAbsolutePathPerLine) {
  const GuardCase cases[] = {
      {"only line", k_exe, true},
      {"only line with newline", k_exe + "\n", true},
      {"among others", "/opt/a\n" + k_exe + "\n/opt/b\n", true},
      {"CRLF", "/opt/a\r\n" + k_exe + "\r\n", true},
      {"blanks around", "  \t" + k_exe + " \t\n", true},
      {"after comments and blank lines", "# enabled executables\n\n   \n" + k_exe, true},
      {"empty file", "", false},
      {"only comments", "# " + k_exe + "\n", false},
      {"commented out", "#" + k_exe + "\n", false},
      {"indented comment", "   #" + k_exe + "\n", false},
      {"other paths", "/opt/a\n/opt/b\n", false},
      {"prefix of the path", k_exe.substr(0, k_exe.size() - 1), false},
      {"path plus suffix", k_exe + "2", false},
      {"relative entry", "llama-server\n", false},
      {"directory of the path", "/Users/lume/Library/Application Support/llama/bin\n", false},
      {"inline text after path", k_exe + " # comment", false},
  };
  for (const GuardCase& c : cases) {
    EXPECT_EQ(guard_lists(c.text, k_exe), c.listed) << c.name;
  }
}

TEST(GuardLists, AnEmptyOrRelativeExecutableNeverMatches) {
  EXPECT_FALSE(guard_lists("\n", ""));
  EXPECT_FALSE(guard_lists("llama-server\n", "llama-server"));
}

} // namespace
} // namespace lume_unlock::policy
