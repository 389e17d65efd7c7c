#include "util/text_check.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

TEST(SecretScrub, ReplacesEveryOccurrenceOfEachSecret) {
  EXPECT_EQ(scrub_secrets("pw=hunter2 again hunter2; token tok-9 tok-9", {"hunter2", "tok-9"}),
            "pw=[scrubbed] again [scrubbed]; token [scrubbed] [scrubbed]");
}

TEST(SecretScrub, ASecretContainingAnotherIsScrubbedWhole) {
  // "abc" inside "xabcx": the longer one first, so no "x" of it is left beside a marker.
  EXPECT_EQ(scrub_secrets("[xabcx] [abc]", {"abc", "xabcx"}), "[[scrubbed]] [[scrubbed]]");
}

TEST(SecretScrub, EmptySecretsAreIgnoredAndTextWithoutSecretsIsUnchanged) {
  EXPECT_EQ(scrub_secrets("nothing to hide", {"", "absent"}), "nothing to hide");
  EXPECT_EQ(scrub_secrets("", {"x"}), "");
}

TEST(SecretScrub, AMarkerMadeOfTheSecretDoesNotLoop) {
  // A secret that is part of the marker: replacing it must not find it again inside the marker.
  EXPECT_EQ(scrub_secrets("scrub me", {"scrub"}), "[scrubbed] me");
}

TEST(SecretScrub, SecretsAcrossLinesAndInJsonAreScrubbed) {
  EXPECT_EQ(scrub_secrets("{\"password\": \"p@ss w0rd\"}\nline p@ss w0rd\n", {"p@ss w0rd"}),
            "{\"password\": \"[scrubbed]\"}\nline [scrubbed]\n");
}

} // namespace
} // namespace lume_unlock::util
