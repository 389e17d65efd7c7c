#include "util/error.hpp"
#include "util/result.hpp"

#include <gtest/gtest.h>

namespace lume_unlock {
namespace {

TEST(Error, ExitCodesFollowTheCliContract) {
  EXPECT_EQ(exit_code(ErrorCategory::failure), 1);
  EXPECT_EQ(exit_code(ErrorCategory::usage), 2);
  EXPECT_EQ(exit_code(ErrorCategory::lume_api), 3);
  EXPECT_EQ(exit_code(ErrorCategory::registry), 4);
  EXPECT_EQ(exit_code(ErrorCategory::guest), 5);
  EXPECT_EQ(exit_code(ErrorCategory::verification), 6);
}

TEST(Error, MessageJoinsWhatAndWhy) {
  Error e(ErrorCategory::lume_api,
          "get of VM 'demo'",
          "HTTP 400: Virtual machine not found: demo",
          "list VMs with 'lume ls'");
  EXPECT_EQ(e.message(), "get of VM 'demo': HTTP 400: Virtual machine not found: demo");
  EXPECT_STREQ(e.what(), "get of VM 'demo': HTTP 400: Virtual machine not found: demo");
  EXPECT_EQ(e.with_context("create step 'image'").message(),
            "create step 'image': get of VM 'demo': HTTP 400: Virtual machine not found: demo");
  EXPECT_EQ(e.with_context("x").hint(), "list VMs with 'lume ls'");
}

// Issue 27: the error type escapes outside text once, for every caller.
TEST(Error, EscapesControlCharactersInEveryPart) {
  Error e(ErrorCategory::usage,
          "invalid VM name 'a\x1b]0;pwned\x07'",
          "server said \x1b[31mno\x1b[0m",
          "run 'lume-unlock create \x9b'");
  EXPECT_EQ(e.what_failed(), "invalid VM name 'a\\x1b]0;pwned\\x07'");
  EXPECT_EQ(e.why(), "server said \\x1b[31mno\\x1b[0m");
  EXPECT_EQ(e.hint(), "run 'lume-unlock create \\x9b'");
  EXPECT_EQ(e.message(), "invalid VM name 'a\\x1b]0;pwned\\x07': server said \\x1b[31mno\\x1b[0m");
  EXPECT_STREQ(e.what(), e.message().c_str());
  EXPECT_EQ(e.with_context("status").message(), "status: " + e.message());
}

TEST(Error, CutsALongQuotedValue) {
  const std::string reference(120 * 1024, 'r');
  Error e(ErrorCategory::usage, "invalid reference '" + reference + "'", "too long");
  EXPECT_EQ(e.what_failed(),
            "invalid reference '" + reference.substr(0, 255) + "… (" +
                std::to_string(reference.size() + 2) + " bytes)");
}

TEST(Result, CarriesValueOrError) {
  Result<int> good(42);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good.value(), 42);
  Result<int> bad(Error(ErrorCategory::usage, "bad", "input"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().category(), ErrorCategory::usage);
  EXPECT_THROW(std::move(bad).value_or_throw(), Error);
}

} // namespace
} // namespace lume_unlock
