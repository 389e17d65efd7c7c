#include "util/encoding.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

TEST(XmlEscape, CoversTheFiveEntitiesAndKeepsEveryOtherByte) {
  EXPECT_EQ(xml_escape("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&apos;f");
  EXPECT_EQ(xml_escape("&amp;"), "&amp;amp;");
  EXPECT_EQ(xml_escape("caf\xc3\xa9\t"), "caf\xc3\xa9\t");
  EXPECT_EQ(xml_escape(""), "");
}

} // namespace
} // namespace lume_unlock::util
