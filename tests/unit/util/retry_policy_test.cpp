#include "util/retry_policy.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

using std::chrono::seconds;

// 1999-12-31 23:59:00 UTC.
const auto k_now = std::chrono::system_clock::from_time_t(946684740);

HttpResponse answer(long status, std::vector<HttpHeader> headers) {
  HttpResponse response;
  response.status = status;
  response.headers = std::move(headers);
  return response;
}

TEST(RetryPolicy, RetryAfterIsReadInSecondsAndAsAnHttpDate) {
  EXPECT_EQ(parse_retry_after("120", k_now), seconds(120));
  EXPECT_EQ(parse_retry_after(" 3 ", k_now), seconds(3));
  EXPECT_EQ(parse_retry_after("Fri, 31 Dec 1999 23:59:59 GMT", k_now), seconds(59));
  EXPECT_EQ(parse_retry_after("Fri, 31 Dec 1999 23:00:00 GMT", k_now), seconds(0)) << "past";
  EXPECT_FALSE(parse_retry_after("Fri, 31 Dec 1999 23:59:59 PST", k_now));
  EXPECT_FALSE(parse_retry_after("Fri, 31 Foo 1999 23:59:59 GMT", k_now));
  EXPECT_FALSE(parse_retry_after("-1", k_now));
  EXPECT_FALSE(parse_retry_after("", k_now));
  EXPECT_FALSE(parse_retry_after("99999999999", k_now));
}

TEST(RetryPolicy, RateLimitGivesTheResetOfAnExhaustedPolicy) {
  // Hugging Face's 429 (huggingface_hub parse_ratelimit_headers' example).
  EXPECT_EQ(parse_ratelimit_reset("\"api\";r=0;t=55"), seconds(55));
  EXPECT_EQ(parse_ratelimit_reset("\"burst\";r=5;t=1, \"daily\";r=0;t=3600"), seconds(3600));
  EXPECT_EQ(parse_ratelimit_reset("\"api\" ; t = 7 ; r = 0"), seconds(7));
  EXPECT_FALSE(parse_ratelimit_reset("\"default\";r=50;t=30")) << "quota left";
  EXPECT_FALSE(parse_ratelimit_reset("\"default\";r=0")) << "no reset";
  EXPECT_FALSE(parse_ratelimit_reset("\"default\";r=0;t=soon"));
  EXPECT_FALSE(parse_ratelimit_reset(""));
}

TEST(RetryPolicy, RetryAfterTakesPrecedenceOverRateLimit) {
  EXPECT_EQ(server_wait(answer(429, {{"RateLimit", "\"api\";r=0;t=55"}}), k_now), seconds(55));
  EXPECT_EQ(
      server_wait(answer(429, {{"ratelimit", "\"api\";r=0;t=55"}, {"Retry-After", "9"}}), k_now),
      seconds(9));
  EXPECT_FALSE(server_wait(answer(503, {}), k_now));
}

TEST(RetryPolicy, BackoffDoublesUpToItsCap) {
  RetryPolicy policy;
  policy.backoff = std::chrono::milliseconds(100);
  policy.max_backoff = std::chrono::milliseconds(350);
  EXPECT_EQ(policy.backoff_before(1), std::chrono::milliseconds(100));
  EXPECT_EQ(policy.backoff_before(2), std::chrono::milliseconds(200));
  EXPECT_EQ(policy.backoff_before(3), std::chrono::milliseconds(350));
  EXPECT_EQ(policy.backoff_before(30), std::chrono::milliseconds(350));
}

TEST(RetryPolicy, RetriesEndWhenSpentOrWhenTheServerAsksTooLong) {
  RetryPolicy policy;
  policy.max_retries = 2;
  policy.backoff = std::chrono::milliseconds(1);
  policy.max_server_wait = seconds(60);
  Retries retries(policy);
  const auto too_long = answer(429, {{"RateLimit", "\"api\";r=0;t=3600"}});
  const auto refused = retries.next(&too_long);
  EXPECT_EQ(refused.verdict, Retries::Verdict::wait_too_long);
  EXPECT_EQ(refused.asked, seconds(3600));
  EXPECT_EQ(retries.next().verdict, Retries::Verdict::retry);
  const auto now = answer(503, {{"Retry-After", "0"}});
  EXPECT_EQ(retries.next(&now).verdict, Retries::Verdict::retry);
  const auto spent = retries.next();
  EXPECT_EQ(spent.verdict, Retries::Verdict::spent);
  EXPECT_EQ(spent.attempts, 3u);
}

TEST(RetryPolicy, OnlyStatusesAndFailuresARetryCanChangeAreRetried) {
  for (long status : {408L, 429L, 500L, 502L, 503L, 504L}) {
    EXPECT_TRUE(retryable_status(status)) << status;
  }
  for (long status : {200L, 400L, 401L, 403L, 404L, 416L}) {
    EXPECT_FALSE(retryable_status(status)) << status;
  }
  EXPECT_TRUE(retryable_transport(TransportError::Kind::stalled));
  EXPECT_FALSE(retryable_transport(TransportError::Kind::tls));
  EXPECT_FALSE(retryable_transport(TransportError::Kind::protocol));
}

} // namespace
} // namespace lume_unlock::util
