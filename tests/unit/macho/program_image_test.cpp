#include "fixture.hpp"
#include "macho/cpu.hpp"
#include "macho/program_image.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace lume_unlock::macho {
namespace {

using ::testing::HasSubstr;

using test::macho_fixture;

ProgramImage read_ok(const std::string& bytes) {
  auto image = read_program_image(read_from_bytes(bytes));
  EXPECT_TRUE(image.ok()) << (image.ok() ? "" : image.error().message());
  return image.ok() ? image.value() : ProgramImage{};
}

void put32le(std::string& bytes, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) {
    bytes[at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
  }
}

void put32be(std::string& bytes, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) {
    bytes[at + i] = static_cast<char>((value >> (8 * (3 - i))) & 0xff);
  }
}

TEST(MachoProgramImage, ThinArm64FromTheCrossToolchainIsSignedAdHocByTheLinker) {
  const ProgramImage image = read_ok(macho_fixture("arm64"));
  ASSERT_EQ(image.slices.size(), 1u);
  EXPECT_FALSE(image.fat);
  const Slice& slice = image.slices[0];
  EXPECT_EQ(slice.arch(), "arm64");
  EXPECT_EQ(slice.cputype, k_cpu_type_arm64);
  EXPECT_EQ(slice.filetype, 2u); // MH_EXECUTE
  ASSERT_TRUE(slice.signature);
  EXPECT_EQ(slice.signature->flags, k_cs_adhoc | k_cs_linker_signed);
  EXPECT_FALSE(slice.signature->has_entitlements);
  EXPECT_FALSE(slice.signature->hardened_runtime());
  EXPECT_FALSE(slice.signature->library_validation());
}

TEST(MachoProgramImage, ThinX86_64IsUnsignedAndArm64eIsTheSubtypeWithItsCapabilityBit) {
  const ProgramImage intel = read_ok(macho_fixture("x86_64"));
  ASSERT_EQ(intel.slices.size(), 1u);
  EXPECT_EQ(intel.archs(), "x86_64");
  EXPECT_FALSE(intel.slices[0].signature);
  const ProgramImage arm64e = read_ok(macho_fixture("arm64e"));
  ASSERT_EQ(arm64e.slices.size(), 1u);
  EXPECT_EQ(arm64e.archs(), "arm64e");
  EXPECT_EQ(arm64e.slices[0].cpusubtype, 0x80000002u);
  EXPECT_EQ(arm64e.find("arm64"), nullptr);
}

TEST(MachoProgramImage, FatFilesOf32And64BitHeadersListEverySliceWithItsOwnSignature) {
  for (const char* name : {"fat-arm64-x86_64", "fat64-arm64-x86_64"}) {
    SCOPED_TRACE(name);
    const ProgramImage image = read_ok(macho_fixture(name));
    EXPECT_TRUE(image.fat);
    ASSERT_EQ(image.slices.size(), 2u);
    const Slice* arm64 = image.find("arm64");
    const Slice* intel = image.find("x86_64");
    ASSERT_NE(arm64, nullptr);
    ASSERT_NE(intel, nullptr);
    EXPECT_GT(arm64->offset, 0u);
    ASSERT_TRUE(arm64->signature);
    EXPECT_EQ(arm64->signature->flags, k_cs_adhoc | k_cs_linker_signed);
    EXPECT_FALSE(intel->signature);
  }
  const ProgramImage both = read_ok(macho_fixture("fat-arm64-arm64e"));
  ASSERT_EQ(both.slices.size(), 2u);
  EXPECT_NE(both.find("arm64"), nullptr);
  EXPECT_NE(both.find("arm64e"), nullptr);
}

TEST(MachoProgramImage, PatchedFlagsAndEntitlementsAreRead) {
  const ProgramImage runtime = read_ok(macho_fixture("arm64-runtime"));
  ASSERT_TRUE(runtime.slices.at(0).signature);
  EXPECT_TRUE(runtime.slices[0].signature->hardened_runtime());
  EXPECT_TRUE(runtime.slices[0].signature->library_validation()); // implied by the runtime

  const ProgramImage allow = read_ok(macho_fixture("arm64-runtime-allow-dyld"));
  ASSERT_TRUE(allow.slices.at(0).signature);
  const CodeSignature& with_one = *allow.slices[0].signature;
  EXPECT_TRUE(with_one.has_entitlements);
  EXPECT_TRUE(with_one.allow_dyld_environment);
  EXPECT_FALSE(with_one.disable_library_validation); // <false/> in the plist
  EXPECT_TRUE(with_one.library_validation());

  const ProgramImage both = read_ok(macho_fixture("arm64-runtime-both"));
  ASSERT_TRUE(both.slices.at(0).signature);
  EXPECT_TRUE(both.slices[0].signature->allow_dyld_environment);
  EXPECT_TRUE(both.slices[0].signature->disable_library_validation);
  EXPECT_FALSE(both.slices[0].signature->library_validation());

  const ProgramImage explicit_lv = read_ok(macho_fixture("arm64-library-validation"));
  ASSERT_TRUE(explicit_lv.slices.at(0).signature);
  EXPECT_FALSE(explicit_lv.slices[0].signature->hardened_runtime());
  EXPECT_TRUE(explicit_lv.slices[0].signature->library_validation());

  const ProgramImage fat = read_ok(macho_fixture("fat-arm64-runtime-x86_64"));
  ASSERT_NE(fat.find("arm64"), nullptr);
  ASSERT_TRUE(fat.find("arm64")->signature);
  EXPECT_TRUE(fat.find("arm64")->signature->hardened_runtime());
}

TEST(MachoProgramImage, OtherFilesAreNotMachOAndSayWhatTheyAre) {
  EXPECT_EQ(read_ok("#!/bin/sh\nexec sleep 1\n").other, "a script (#!)");
  EXPECT_EQ(read_ok(test::slurp("/bin/true")).other, "an ELF file");
  EXPECT_EQ(read_ok("").other, "an empty file");
  EXPECT_EQ(read_ok(std::string("\xca\xfe\xba\xbe\x00\x00\x00\x37", 8)).other, "a Java class file");
  EXPECT_EQ(read_ok("MZ\x90").other, "a file of another kind");
  EXPECT_FALSE(read_ok("#!/bin/sh\n").is_macho());
}

TEST(MachoProgramImage, ReadsOnlyTheHeadersAndTheSignatureInBoundedRequests) {
  const std::string bytes = macho_fixture("fat64-arm64-x86_64");
  const ReadAt inner = read_from_bytes(bytes);
  std::vector<std::pair<std::uint64_t, std::size_t>> requests;
  const ReadAt counting = [&](std::uint64_t offset, std::size_t length) {
    requests.emplace_back(offset, length);
    return inner(offset, length);
  };
  ASSERT_TRUE(read_program_image(counting).ok());
  std::size_t total = 0;
  for (const auto& [offset, length] : requests) {
    EXPECT_LE(length, 4096u);
    EXPECT_LE(offset + length, bytes.size());
    total += length;
  }
  EXPECT_LT(total, bytes.size() / 3) << "read " << total << " of " << bytes.size() << " bytes";
}

TEST(MachoProgramImage, EveryTruncationIsAnErrorOrReadsTheSameNeverAnOverRead) {
  const std::string bytes = macho_fixture("fat-arm64-runtime-x86_64");
  const ProgramImage full = read_ok(bytes);
  std::size_t errors = 0;
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const std::string cut = bytes.substr(0, size);
    auto image = read_program_image(read_from_bytes(cut));
    if (!image.ok()) {
      EXPECT_EQ(image.error().category(), ErrorCategory::usage) << image.error().message();
      ++errors;
    } else if (image.value().is_macho()) {
      // Cut in bytes the reader never reads (code, padding, the end of a CodeDirectory).
      EXPECT_EQ(image.value().archs(), full.archs()) << size;
    }
  }
  EXPECT_GT(errors, bytes.size() / 2);
}

TEST(MachoProgramImage, HostileHeadersAreErrorsThatSayWhatDoesNotFit) {
  const std::string thin = macho_fixture("arm64");
  auto expect_error = [](const std::string& bytes, const std::string& part) {
    auto image = read_program_image(read_from_bytes(bytes));
    ASSERT_FALSE(image.ok()) << part;
    EXPECT_EQ(image.error().category(), ErrorCategory::usage);
    EXPECT_THAT(image.error().message(), HasSubstr(part)) << image.error().message();
    EXPECT_EQ(image.error().hint(),
              "the program file is damaged or not a complete Mach-O; reinstall the program");
  };
  std::string huge_commands = thin;
  put32le(huge_commands, 20, 0xfffffff0); // sizeofcmds
  expect_error(huge_commands, "do not fit the slice");
  std::string many_commands = thin;
  put32le(many_commands, 16, 100000); // ncmds
  expect_error(many_commands, "100000 load commands cannot fit");
  std::string zero_size = thin;
  put32le(zero_size, 36, 0); // the first command's cmdsize
  expect_error(zero_size, "load command 0 has size 0");

  std::string fat = macho_fixture("fat-arm64-x86_64");
  // 0xcafebabe with a large count is a Java class file (its version); 0xcafebabf is only fat.
  std::string many_slices = fat;
  put32be(many_slices, 4, 33);
  EXPECT_EQ(read_ok(many_slices).other, "a Java class file");
  std::string many_slices_64 = macho_fixture("fat64-arm64-x86_64");
  put32be(many_slices_64, 4, 33);
  expect_error(many_slices_64, "claims 33 slices");
  std::string outside = fat;
  put32be(outside, 8 + 8, 0xfffffff0); // the first slice's offset
  expect_error(outside, "the file is truncated");
  std::string overlapping = fat;
  put32be(overlapping, 8 + 8, 4);
  expect_error(overlapping, "overlaps the fat header");
  std::string liar = fat;
  put32be(liar, 8 + 4, 2); // the fat header calls slice 0 something its own header does not
  expect_error(liar, "in the fat header but");
}

// ld64.lld -platform_version macos 26.0 writes LC_BUILD_VERSION minos 26.0 (as llama.cpp's arm64
// releases carry from b9428 on); the 13.0 programs, patched to the older LC_VERSION_MIN_MACOSX,
// keep 13.0; a slice with neither names no minimum.
TEST(MachoProgramImage, TheMinimumMacOSOfEitherLoadCommandIsRead) {
  const struct {
    const char* file;
    std::uint32_t min_macos;
  } rows[] = {{"arm64", 0x0d0000},
              {"arm64-minos-26", 0x1a0000},
              {"x86_64-minos-26", 0x1a0000},
              {"x86_64-version-min", 0x0d0000}};
  for (const auto& row : rows) {
    const ProgramImage image = read_ok(macho_fixture(row.file));
    ASSERT_EQ(image.slices.size(), 1u) << row.file;
    EXPECT_EQ(image.slices[0].min_macos, std::optional<std::uint32_t>(row.min_macos)) << row.file;
  }
  const ProgramImage fat = read_ok(macho_fixture("fat-arm64-x86_64"));
  EXPECT_EQ(fat.slices[1].min_macos, std::optional<std::uint32_t>(0x0d0000));

  // A bare 64-bit header with no load commands: no minimum.
  std::string bare(32, '\0');
  put32le(bare, 0, 0xfeedfacf);
  put32le(bare, 4, k_cpu_type_arm64);
  put32le(bare, 12, 2);
  const ProgramImage neither = read_ok(bare);
  ASSERT_EQ(neither.slices.size(), 1u);
  EXPECT_FALSE(neither.slices[0].min_macos);

  // LC_BUILD_VERSION of another platform (2, iOS) names no macOS minimum; a short one is an error.
  std::string ios = macho_fixture("arm64-minos-26");
  const std::size_t at = ios.find(std::string("\x32\0\0\0\x20\0\0\0", 8));
  ASSERT_NE(at, std::string::npos);
  put32le(ios, at + 8, 2);
  EXPECT_FALSE(read_ok(ios).slices[0].min_macos);
  std::string short_command = macho_fixture("arm64-minos-26");
  put32le(short_command, at + 4, 16);
  auto image = read_program_image(read_from_bytes(short_command));
  ASSERT_FALSE(image.ok());
  EXPECT_THAT(image.error().message(), HasSubstr("LC_BUILD_VERSION has size 16, too small"))
      << image.error().message();
}

TEST(MachoProgramImage, VersionsArePackedAsNumbersAndPrintedAsOtoolDoes) {
  EXPECT_EQ(parse_version("26"), parse_version("26.0.0"));
  EXPECT_EQ(parse_version("15.7.2"), std::optional<std::uint32_t>(0x0f0702));
  EXPECT_GT(*parse_version("26.0"), *parse_version("15.7.2"));
  EXPECT_GT(*parse_version("10.15"), *parse_version("10.9.5"));
  for (const char* bad : {"", "26.", ".1", "26.x", "1.2.3.4", "26.256", "65536", "-1", "26 "}) {
    EXPECT_FALSE(parse_version(bad)) << bad;
  }
  EXPECT_EQ(format_version(0x1a0000), "26.0");
  EXPECT_EQ(format_version(0x0d0300), "13.3");
  EXPECT_EQ(format_version(0x1a0502), "26.5.2");
}

TEST(MachoProgramImage, ErrorsOfTheSourcePassThrough) {
  const ReadAt failing = [](std::uint64_t, std::size_t) -> Result<std::string> {
    return Error(ErrorCategory::guest, "reading '/x' from vm1", "connection lost");
  };
  auto image = read_program_image(failing);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().category(), ErrorCategory::guest);
  EXPECT_EQ(image.error().message(), "reading '/x' from vm1: connection lost");
}

} // namespace
} // namespace lume_unlock::macho
