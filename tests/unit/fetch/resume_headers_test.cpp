#include "fetch/resume_headers.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::fetch {
namespace {

TEST(ResumeHeaders, ContentRangeGivesStartAndTotal) {
  const auto range = parse_content_range("bytes 100-199/200");
  EXPECT_EQ(range.start, 100u);
  EXPECT_EQ(range.total, 200u);
  EXPECT_FALSE(parse_content_range("bytes 0-9/*").total);
  EXPECT_FALSE(parse_content_range("items 0-9/10").start);
  EXPECT_FALSE(parse_content_range("bytes */10").start);
  EXPECT_EQ(parse_content_range("bytes */10").total, 10u);
}

TEST(ResumeHeaders, RetryAfterIsReadInSecondsOnly) {
  EXPECT_EQ(parse_retry_after("120"), std::chrono::seconds(120));
  EXPECT_EQ(parse_retry_after(" 3 "), std::chrono::seconds(3));
  EXPECT_FALSE(parse_retry_after("Fri, 31 Dec 1999 23:59:59 GMT")) << "the date form";
  EXPECT_FALSE(parse_retry_after("-1"));
  EXPECT_FALSE(parse_retry_after(""));
  EXPECT_FALSE(parse_retry_after("99999999999"));
}

TEST(ResumeHeaders, OnlyAStrongEtagCanProveTheSameFile) {
  EXPECT_EQ(strong_etag("\"v1\""), "\"v1\"");
  EXPECT_FALSE(strong_etag("W/\"v1\"")) << "If-Range takes no weak validator";
  EXPECT_FALSE(strong_etag("v1"));
  EXPECT_FALSE(strong_etag("\"a\"b\""));
  EXPECT_FALSE(strong_etag("\"a b\""));
  EXPECT_FALSE(strong_etag(""));
}

} // namespace
} // namespace lume_unlock::fetch
