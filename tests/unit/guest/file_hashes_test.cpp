#include "guest/guest_records.hpp"
#include "scripted_session.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::guest {
namespace {

const std::string k_a(64, 'a');
const std::string k_b(64, 'b');

TEST(ParseShasumOutput, ReadsTextAndBinaryModeLinesAndIgnoresTheRest) {
  const std::string output = k_a + "  /opt/x/bin/llama-server\n" + k_b + " */Users/lume/m.gguf\n" +
                             "shasum: /missing: No such file or directory\n" +
                             std::string(63, 'c') + "  /short\n" + std::string(64, 'g') +
                             "  /not-hex\n" + "\\" + k_a + "  escaped\\nname\n";
  const auto digests = parse_shasum_output(output);
  EXPECT_EQ(digests,
            (std::map<std::string, std::string>{{"/opt/x/bin/llama-server", k_a},
                                                {"/Users/lume/m.gguf", k_b}}));
}

TEST(HashGuestFiles, HashesEveryPathInOneQuotedCommand) {
  test::ScriptedSession session;
  session.answers.push_back({0, k_a + "  /a b/it's\n", ""});
  auto digests = hash_guest_files(session, {"/a b/it's", "/gone"});
  ASSERT_TRUE(digests.ok()) << digests.error().message();
  EXPECT_EQ(digests.value(), (std::map<std::string, std::string>{{"/a b/it's", k_a}}));
  ASSERT_EQ(session.commands.size(), 1u);
  EXPECT_EQ(session.commands[0],
            "'shasum' '-a' '256' '/a b/it'\\''s' '/gone' 2>/dev/null\n"
            "i=0; for p in '/a b/it'\\''s' '/gone'; do [ -L \"$p\" ] && "
            "printf 'link %s %s\\n' \"$i\" \"$(readlink \"$p\")\"; i=$((i+1)); done; exit 0");
}

TEST(HashGuestFiles, ALinkIsReportedAsItsTargetNotTheDigestOfWhatItPointsTo) {
  test::ScriptedSession session;
  // shasum follows the link to lib/b; the link line names the link itself by its position.
  session.answers.push_back(
      {0,
       k_a + "  /lib/a.dylib\n" + k_b + "  /lib/b.dylib\nlink 0 b.dylib\nlink 9 x\nlink z y\n",
       ""});
  auto digests = hash_guest_files(session, {"/lib/a.dylib", "/lib/b.dylib"});
  ASSERT_TRUE(digests.ok()) << digests.error().message();
  EXPECT_EQ(digests.value(),
            (std::map<std::string, std::string>{{"/lib/a.dylib", link_state("b.dylib")},
                                                {"/lib/b.dylib", k_b}}));
  EXPECT_EQ(link_state("b.dylib"), "-> b.dylib");
}

TEST(HashGuestFiles, NoPathsRunsNoCommand) {
  test::ScriptedSession session;
  auto digests = hash_guest_files(session, {});
  ASSERT_TRUE(digests.ok());
  EXPECT_TRUE(digests.value().empty());
  EXPECT_TRUE(session.commands.empty());
}

TEST(HashGuestFiles, PathsShasumWouldEscapeAreRefusedBeforeAnyCommand) {
  for (const std::string& path :
       {std::string("/a\nb"), std::string("/a\\b"), std::string("/a\x1b")}) {
    test::ScriptedSession session;
    auto digests = hash_guest_files(session, {"/fine", path});
    ASSERT_FALSE(digests.ok()) << path;
    EXPECT_EQ(digests.error().category(), ErrorCategory::usage);
    EXPECT_NE(digests.error().message().find("holds a control character or a backslash"),
              std::string::npos)
        << digests.error().message();
    EXPECT_TRUE(session.commands.empty());
  }
}

} // namespace
} // namespace lume_unlock::guest
