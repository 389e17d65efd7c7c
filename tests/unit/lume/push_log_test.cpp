// The failure line of Lume's background push (Handlers.swift handlePush) and Logger.swift's
// ERROR lines, found in the text GET /lume/logs returns.
#include "lume/registry_image.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::lume {
namespace {

const std::string k_failed = "Background push failed for image: tahoe-llm:1 - Error: The "
                             "operation couldn\u2019t be completed. (lume.PushError error 3.)";

TEST(PushLog, FindsThisPushsFailureLineWithLumesTextAndTheErrorsBeforeIt) {
  const std::string log = "Server started on port 7777\n"
                          "[2026-12-03T12:00:00Z] ERROR: Missing GitHub credentials. Please set "
                          "GITHUB_USERNAME and GITHUB_TOKEN environment variables\n" +
                          k_failed + "\n";
  auto failure = find_push_failure(log, "tahoe-llm", {"1"});
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->lume_error,
            "The operation couldn\u2019t be completed. (lume.PushError error 3.)");
  ASSERT_EQ(failure->logged_errors.size(), 1u);
  EXPECT_EQ(failure->logged_errors[0],
            "[2026-12-03T12:00:00Z] ERROR: Missing GitHub credentials. Please set "
            "GITHUB_USERNAME and GITHUB_TOKEN environment variables");
}

TEST(PushLog, TagsAreJoinedWithCommasAsLumePrintsThem) {
  const std::string log = "Background push failed for image: x:1,latest - Error: boom";
  EXPECT_EQ(find_push_failure(log, "x", {"1", "latest"})->lume_error, "boom");
  EXPECT_FALSE(find_push_failure(log, "x", {"1"}).has_value());
}

TEST(PushLog, OtherImagesSuccessesAndNoLogAreNotFailures) {
  EXPECT_FALSE(find_push_failure(k_failed, "tahoe-llm2", {"1"}).has_value());
  EXPECT_FALSE(find_push_failure(k_failed, "tahoe-llm", {"2"}).has_value());
  EXPECT_FALSE(find_push_failure("Background push completed successfully for image: tahoe-llm:1\n",
                                 "tahoe-llm",
                                 {"1"})
                   .has_value());
  EXPECT_FALSE(find_push_failure(k_info_log_missing, "tahoe-llm", {"1"}).has_value());
  EXPECT_FALSE(find_push_failure("", "tahoe-llm", {"1"}).has_value());
}

TEST(PushLog, KeepsOnlyTheLastThreeErrorLines) {
  std::string log;
  for (int i = 0; i < 5; ++i) {
    log += "[t] ERROR: e" + std::to_string(i) + "\n";
  }
  auto failure = find_push_failure(log + k_failed, "tahoe-llm", {"1"});
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->logged_errors,
            (std::vector<std::string>{"[t] ERROR: e2", "[t] ERROR: e3", "[t] ERROR: e4"}));
}

} // namespace
} // namespace lume_unlock::lume
