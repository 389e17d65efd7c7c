// install_payload's archive, script and error mapping, over a scripted session.
#include "guest/payload.hpp"
#include "unit/guest/scripted_session.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::guest {
namespace {

using test::ScriptedSession;

const std::vector<PayloadFile> k_files = {
    PayloadFile::bytes("/h/Library/Application Support/a", "A"),
    PayloadFile::bytes("/h/it's/b", "B", 0755),
};

TEST(Payload, NothingToInstallRunsNothing) {
  ScriptedSession session;
  auto report = install_payload(session, {}, "/h/staging");
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.value().commands, 0u);
  EXPECT_TRUE(session.commands.empty());
}

TEST(Payload, OneUploadAndOneCommand) {
  ScriptedSession session;
  auto report = install_payload(session, k_files, "/h/staging dir");
  ASSERT_TRUE(report.ok()) << report.error().message();
  ASSERT_EQ(session.commands.size(), 2u);
  ASSERT_EQ(session.uploads.size(), 1u);
  const std::string archive = session.uploads.begin()->first;
  EXPECT_EQ(archive.rfind("/h/staging dir/payload-", 0), 0u);
  EXPECT_EQ(archive.substr(archive.size() - 7), ".tar.gz");
  EXPECT_NE(session.commands[1].find("tar -xzf \"$a\" -C \"$s\""), std::string::npos);
}

TEST(Payload, ScriptQuotesEveryPathAndUndoesInReverseOrder) {
  auto script = payload_install_script(k_files);
  ASSERT_TRUE(script.ok());
  const std::string& s = script.value();
  EXPECT_NE(s.find("put 0 '/h/Library/Application Support/a' '/h/Library/Application Support' 0644 "
                   "|| fail 0\nn=1\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("put 1 '/h/it'\\''s/b' '/h/it'\\''s' 0755 || fail 1\nn=2\n"), std::string::npos)
      << s;
  const auto undo_b = s.find("then back 1 ");
  const auto undo_a = s.find("then back 0 ");
  ASSERT_NE(undo_b, std::string::npos);
  ASSERT_NE(undo_a, std::string::npos);
  EXPECT_LT(undo_b, undo_a) << "the last file moved is put back first";
  EXPECT_NE(s.find("shasum -a 256 -c SHA256SUMS"), std::string::npos);
}

struct FailureCase {
  const char* name;
  CommandResult result;
  ErrorCategory category;
  std::string message;
};

TEST(Payload, FailuresNameTheFileAndSayWhatIsLeft) {
  const std::vector<FailureCase> cases = {
      {"extract",
       {10, "", "tar: truncated\n"},
       ErrorCategory::guest,
       "installing 2 files in the guest: extracting the archive failed: tar: truncated"},
      {"check",
       {11, "files/0: OK\nfiles/1: FAILED\n", ""},
       ErrorCategory::verification,
       "installing 2 files in the guest: SHA-256 mismatch after extraction for '/h/it's/b'"},
      {"install",
       {12, "lume-unlock-payload-failed 1\n", "mv: Permission denied\n"},
       ErrorCategory::guest,
       "installing 2 files in the guest: cannot install '/h/it's/b': mv: Permission denied"},
      {"other",
       {2, "", "sh: oops\n"},
       ErrorCategory::guest,
       "installing 2 files in the guest: the install command exited with status 2: sh: oops"},
  };
  for (const FailureCase& c : cases) {
    SCOPED_TRACE(c.name);
    ScriptedSession session;
    session.answers.push_back(c.result);
    auto report = install_payload(session, k_files, "/h/staging");
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.error().category(), c.category);
    EXPECT_EQ(report.error().message(), c.message);
  }
}

TEST(Payload, RollbackThatFailedSaysSo) {
  ScriptedSession session;
  session.answers.push_back({13, "lume-unlock-payload-failed 0\n", ""});
  auto report = install_payload(session, k_files, "/h/staging");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().hint(),
            "putting the previous files back also failed: check the paths in the guest by hand, "
            "then retry");
}

} // namespace
} // namespace lume_unlock::guest
