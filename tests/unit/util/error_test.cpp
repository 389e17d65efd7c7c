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
