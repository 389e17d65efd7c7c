#include "fixture.hpp"
#include "macho/macho.hpp"

#include <gtest/gtest.h>

namespace lume_unlock::macho {
namespace {

const ShimTarget k_darwin{"darwin-arm64", {"arm64"}, true};
const ShimTarget k_linux{"linux-x86_64", {"x86_64"}, true};

struct Row {
  const char* file; ///< a fixture name, or "script:"/"elf:" for a non-Mach-O
  const ShimTarget* shim;
  VerdictKind kind;
  const char* slice;
};

std::string bytes_of(const std::string& file) {
  if (file == "script:") {
    return "#!/bin/sh\nexec /usr/bin/true\n";
  }
  if (file == "elf:") {
    return test::slurp("/bin/true");
  }
  return test::macho_fixture(file);
}

TEST(MachoVerdict, EachVerdictFromRealCrossBuiltAndPatchedPrograms) {
  const Row rows[] = {
      {"arm64", &k_darwin, VerdictKind::injectable, "arm64"},
      {"fat-arm64-x86_64", &k_darwin, VerdictKind::injectable, "arm64"},
      {"fat64-arm64-x86_64", &k_darwin, VerdictKind::injectable, "arm64"},
      {"fat-arm64-arm64e", &k_darwin, VerdictKind::injectable, "arm64"},
      {"arm64-runtime-both", &k_darwin, VerdictKind::injectable, "arm64"},
      {"arm64-library-validation-disabled", &k_darwin, VerdictKind::injectable, "arm64"},
      {"arm64e", &k_darwin, VerdictKind::needs_arm64e_slice, ""},
      {"fat-arm64e-x86_64", &k_darwin, VerdictKind::needs_arm64e_slice, ""},
      {"x86_64", &k_darwin, VerdictKind::wrong_architecture, ""},
      {"arm64-runtime", &k_darwin, VerdictKind::hardened_runtime, "arm64"},
      {"fat-arm64-runtime-x86_64", &k_darwin, VerdictKind::hardened_runtime, "arm64"},
      {"arm64-runtime-allow-dyld", &k_darwin, VerdictKind::library_validation, "arm64"},
      {"arm64-library-validation", &k_darwin, VerdictKind::library_validation, "arm64"},
      {"script:", &k_darwin, VerdictKind::not_macho, ""},
      {"elf:", &k_darwin, VerdictKind::not_macho, ""},
      // The emulated Linux platform of the tests: only a Mach-O is refused there.
      {"elf:", &k_linux, VerdictKind::injectable, ""},
      {"script:", &k_linux, VerdictKind::injectable, ""},
      {"arm64", &k_linux, VerdictKind::wrong_architecture, ""},
      {"arm64e", &k_linux, VerdictKind::needs_arm64e_slice, ""},
      {"fat-arm64-x86_64", &k_linux, VerdictKind::injectable, "x86_64"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string(row.file) + " on " + row.shim->platform);
    const std::string bytes = bytes_of(row.file);
    auto image = read_program_image(read_from_bytes(bytes));
    ASSERT_TRUE(image.ok()) << image.error().message();
    const Verdict verdict = judge_program(image.value(), *row.shim);
    EXPECT_EQ(verdict_name(verdict.kind), std::string(verdict_name(row.kind))) << verdict.why;
    EXPECT_EQ(verdict.slice, row.slice);
    EXPECT_EQ(verdict.refused(), row.kind != VerdictKind::injectable);
    EXPECT_FALSE(verdict.why.empty());
    EXPECT_EQ(verdict.fix.empty(), !verdict.refused()) << verdict.fix;
  }
}

TEST(MachoVerdict, TheTextSaysWhatWasFoundAndWhatToDo) {
  auto judge = [](const std::string& file) {
    const std::string bytes = test::macho_fixture(file);
    return judge_program(read_program_image(read_from_bytes(bytes)).value(), k_darwin);
  };
  const Verdict arm64e = judge("fat-arm64e-x86_64");
  EXPECT_EQ(arm64e.why, "the program is x86_64 arm64e and the darwin-arm64 shim has only arm64");
  EXPECT_EQ(arm64e.fix,
            "the shim bundle has no arm64e slice (ld64.lld cannot link arm64e; see "
            "shim/README.md), so only an arm64 build of this program can be unlocked");
  const Verdict hardened = judge("arm64-runtime");
  EXPECT_EQ(hardened.why,
            "its arm64 slice is signed with the hardened runtime and without "
            "com.apple.security.cs.allow-dyld-environment-variables, so dyld ignores "
            "DYLD_INSERT_LIBRARIES for it");
  EXPECT_EQ(hardened.fix.rfind("re-sign the program ad hoc without the hardened runtime "
                               "('codesign --force --sign - PROGRAM'",
                               0),
            0u);
  const Verdict validation = judge("arm64-runtime-allow-dyld");
  EXPECT_EQ(validation.why,
            "its arm64 slice enforces library validation (hardened runtime) without "
            "com.apple.security.cs.disable-library-validation, so it refuses the ad-hoc signed "
            "shim");
  // A shim signed by a team the program trusts would not be refused for library validation.
  ShimTarget signed_shim = k_darwin;
  signed_shim.ad_hoc_signed = false;
  const std::string bytes = test::macho_fixture("arm64-library-validation");
  EXPECT_FALSE(
      judge_program(read_program_image(read_from_bytes(bytes)).value(), signed_shim).refused());
}

// A slice built for a newer macOS than the guest runs cannot load: refused on either platform,
// before its signature is looked at, with both versions; compared as numbers.
TEST(MachoVerdict, AProgramBuiltForANewerMacOSThanTheGuestsIsRefused) {
  auto judge = [](const std::string& file, const ShimTarget& shim, const char* guest) {
    const std::string bytes = test::macho_fixture(file);
    const auto image = read_program_image(read_from_bytes(bytes));
    return judge_program(
        image.value(), shim, guest != nullptr ? std::optional<std::string>(guest) : std::nullopt);
  };
  const Verdict refused = judge("arm64-minos-26", k_darwin, "15.7.2");
  EXPECT_EQ(verdict_name(refused.kind), std::string("needs-newer-macos"));
  EXPECT_EQ(refused.slice, "arm64");
  EXPECT_EQ(refused.why,
            "its arm64 slice is built for macOS 26.0 or later and the guest runs macOS 15.7.2, "
            "so dyld refuses to load it");
  EXPECT_EQ(refused.fix,
            "use a newer guest image (macOS 26.0 or later), or a build of the program for macOS "
            "15.7.2");
  EXPECT_TRUE(judge("x86_64-minos-26", k_linux, "15.7.2").refused());
  EXPECT_TRUE(judge("x86_64-version-min", k_linux, "12.7").refused());
  EXPECT_FALSE(judge("x86_64-version-min", k_linux, "13").refused()) << "13 == 13.0";
  EXPECT_FALSE(judge("arm64-minos-26", k_darwin, "26").refused()) << "26 == 26.0.0";
  EXPECT_FALSE(judge("arm64-minos-26", k_darwin, "26.5.2").refused());
  // Without a version (not macOS, or not read), or one that is not a version: no check.
  EXPECT_FALSE(judge("arm64-minos-26", k_darwin, nullptr).refused());
  EXPECT_FALSE(judge("arm64-minos-26", k_darwin, "unknown").refused());
  // The order: the slice first (an x86_64-only program is the wrong architecture on arm64).
  EXPECT_EQ(judge("x86_64-minos-26", k_darwin, "15.7.2").kind, VerdictKind::wrong_architecture);
}

TEST(MachoVerdict, EveryKindHasItsStableJsonName) {
  EXPECT_STREQ(verdict_name(VerdictKind::injectable), "injectable");
  EXPECT_STREQ(verdict_name(VerdictKind::needs_arm64e_slice), "needs-arm64e-slice");
  EXPECT_STREQ(verdict_name(VerdictKind::wrong_architecture), "wrong-architecture");
  EXPECT_STREQ(verdict_name(VerdictKind::hardened_runtime), "hardened-runtime");
  EXPECT_STREQ(verdict_name(VerdictKind::library_validation), "library-validation");
  EXPECT_STREQ(verdict_name(VerdictKind::not_macho), "not-mach-o");
  EXPECT_STREQ(verdict_name(VerdictKind::needs_newer_macos), "needs-newer-macos");
}

} // namespace
} // namespace lume_unlock::macho
