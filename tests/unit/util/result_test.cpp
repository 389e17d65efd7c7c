#include "util/result.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock {
namespace {

Result<int> number(bool good) {
  if (!good) {
    return Error(ErrorCategory::usage, "number", "asked to fail");
  }
  return 41;
}

Status check(bool good) {
  LUME_UNLOCK_TRY(number(good));
  return ok_status();
}

Result<std::string> doubled_plus_one(bool good) {
  LUME_UNLOCK_TRY_ASSIGN(const int n, number(good));
  LUME_UNLOCK_TRY_ASSIGN(int m, number(good));
  return std::to_string(n + m + 1);
}

TEST(Result, TryReturnsTheErrorAndContinuesOnSuccess) {
  EXPECT_TRUE(check(true).ok());
  const Status failed = check(false);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message(), "number: asked to fail");
}

TEST(Result, TryAssignBindsTheValueOrReturnsTheError) {
  EXPECT_EQ(doubled_plus_one(true).value(), "83");
  const auto failed = doubled_plus_one(false);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().category(), ErrorCategory::usage);
}

} // namespace
} // namespace lume_unlock
