// Reading a guest program's headers through the session, and how a verdict is told.
#include "apply/programs.hpp"
#include "unit/guest/scripted_session.hpp"
#include "unit/macho/fixture.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::apply {
namespace {

TEST(ProgramCheck, ReadsOnlyBoundedRangesOfTheProgramThroughTheSession) {
  test::ScriptedSession session;
  const std::string bytes = test::macho_fixture("fat64-arm64-x86_64");
  session.files["/opt/llama-server"] = bytes;
  auto image = read_guest_program(session, "/opt/llama-server");
  ASSERT_TRUE(image.ok()) << image.error().message();
  EXPECT_EQ(image.value().slices.size(), 2u);
  EXPECT_TRUE(session.commands.empty()) << "no remote command, SFTP reads only";
  ASSERT_FALSE(session.reads.empty());
  EXPECT_EQ(session.reads[0], "/opt/llama-server@0+4096");
  EXPECT_LE(session.reads.size(), 12u);
}

TEST(ProgramCheck, ErrorsNameTheProgram) {
  test::ScriptedSession session;
  session.files["/opt/cut"] = test::macho_fixture("arm64").substr(0, 100);
  auto cut = read_guest_program(session, "/opt/cut");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().category(), ErrorCategory::usage);
  EXPECT_EQ(cut.error().what_failed(), "program '/opt/cut': reading the Mach-O headers");
  auto gone = read_guest_program(session, "/opt/gone");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().category(), ErrorCategory::guest);
}

TEST(ProgramCheck, TheShimTargetIsTheInstalledPlatformsSliceSignedAdHoc) {
  InstalledShim shim;
  shim.platform = "darwin-arm64";
  const macho::ShimTarget target = shim_target(shim);
  EXPECT_EQ(target.platform, "darwin-arm64");
  EXPECT_EQ(target.slices, std::vector<std::string>{"arm64"});
  EXPECT_TRUE(target.ad_hoc_signed);
  EXPECT_TRUE(target.is_darwin());
}

TEST(ProgramCheck, RefusalsSayWhatStopsTheProgramAndWhatToDo) {
  ProgramCheck check{"srv", "/opt/srv", {}};
  check.verdict.kind = macho::VerdictKind::needs_arm64e_slice;
  check.verdict.why = "the program is arm64e and the darwin-arm64 shim has only arm64";
  check.verdict.fix = "only an arm64 build can be unlocked";
  const Error error = refusal(check);
  EXPECT_EQ(error.category(), ErrorCategory::verification);
  EXPECT_EQ(error.message(),
            "enablement entry 'srv': program '/opt/srv' cannot be unlocked (needs-arm64e-slice): "
            "the program is arm64e and the darwin-arm64 shim has only arm64");
  EXPECT_EQ(error.hint(), "only an arm64 build can be unlocked");
  check.verdict.kind = macho::VerdictKind::not_macho;
  EXPECT_EQ(refusal(check).category(), ErrorCategory::usage);
  check.verdict = macho::Verdict{};
  check.verdict.why = "its arm64 slice lets dyld inject the shim";
  EXPECT_EQ(describe_check(check),
            "program '/opt/srv': injectable (its arm64 slice lets dyld inject the shim)");
}

} // namespace
} // namespace lume_unlock::apply
