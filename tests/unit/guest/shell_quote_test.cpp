#include "guest/shell_quote.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lume_unlock::guest {
namespace {

struct QuoteCase {
  const char* name;
  std::string input;
  std::string quoted;
};

TEST(ShellQuote, WrapsInSingleQuotesAndEscapesOnlySingleQuotes) {
  const std::vector<QuoteCase> cases = {
      {"empty", "", "''"},
      {"plain", "abc", "'abc'"},
      {"space", "Application Support", "'Application Support'"},
      {"single quote", "a b'c", "'a b'\\''c'"},
      {"only quotes", "''", "''\\'''\\'''"},
      {"dollar and backtick", "$HOME `id`", "'$HOME `id`'"},
      {"backslash and double quote", "\\\"", "'\\\"'"},
      {"newline", "a\nb", "'a\nb'"},
      {"glob", "*?[a]", "'*?[a]'"},
      {"non-ASCII", "caf\xc3\xa9 \xff", "'caf\xc3\xa9 \xff'"},
  };
  for (const auto& c : cases) {
    auto quoted = shell_quote(c.input);
    ASSERT_TRUE(quoted.ok()) << c.name;
    EXPECT_EQ(quoted.value(), c.quoted) << c.name;
  }
}

TEST(ShellQuote, RejectsNulWithItsOffset) {
  auto quoted = shell_quote(std::string("ab\0c", 4));
  ASSERT_FALSE(quoted.ok());
  EXPECT_EQ(quoted.error().category(), ErrorCategory::usage);
  EXPECT_EQ(quoted.error().message(),
            "cannot pass a value to the guest's shell: it contains a NUL byte at offset 2 of 4");
  EXPECT_EQ(quoted.error().hint(), "remove the NUL byte; shell arguments are C strings");
}

TEST(ShellJoin, QuotesEachWordAndJoinsWithSpaces) {
  auto line = shell_join({"printf", "%s", "a b'c", ""});
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line.value(), "'printf' '%s' 'a b'\\''c' ''");
}

TEST(ShellJoin, NoWordsIsAnEmptyLine) {
  auto line = shell_join({});
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line.value(), "");
}

TEST(ShellJoin, FailsOnTheFirstNul) {
  auto line = shell_join({"ok", std::string("\0", 1)});
  ASSERT_FALSE(line.ok());
  EXPECT_EQ(line.error().why(), "it contains a NUL byte at offset 0 of 1");
}

TEST(ShellName, AcceptsVariableNamesAndRefusesAnythingTheShellWouldRead) {
  for (const char* name : {"LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "_x", "a1"}) {
    EXPECT_TRUE(require_shell_name(name).ok()) << name;
  }
  for (const char* name : {"", "1A", "A-B", "A B", "A;rm", "$(x)", "A=B"}) {
    auto checked = require_shell_name(name);
    ASSERT_FALSE(checked.ok()) << name;
    EXPECT_EQ(checked.error().category(), ErrorCategory::usage) << name;
  }
}

} // namespace
} // namespace lume_unlock::guest
