#include "macho/macho.hpp"
#include "util/text.hpp"

#include <algorithm>

namespace lume_unlock::macho {

namespace {

Verdict missing_slice(const ProgramImage& image, const ShimTarget& shim) {
  Verdict verdict;
  verdict.archs = image.archs();
  const std::string has = util::join(shim.slices, " ");
  verdict.why =
      "the program is " + verdict.archs + " and the " + shim.platform + " shim has only " + has;
  if (image.find("arm64e") != nullptr) {
    verdict.kind = VerdictKind::needs_arm64e_slice;
    verdict.fix = "the shim bundle has no arm64e slice (ld64.lld cannot link arm64e; see "
                  "shim/README.md), so only an arm64 build of this program can be unlocked";
  } else {
    verdict.kind = VerdictKind::wrong_architecture;
    verdict.fix = "use a build of the program for " + has;
  }
  return verdict;
}

/// The refusal of a slice built for a newer macOS than the guest runs, if it is one.
std::optional<Verdict> newer_macos(const Slice& slice, const std::optional<std::string>& guest) {
  const auto running = guest ? parse_version(*guest) : std::nullopt;
  if (!running || !slice.min_macos || *slice.min_macos <= *running) {
    return std::nullopt;
  }
  const std::string needs = format_version(*slice.min_macos);
  Verdict verdict;
  verdict.kind = VerdictKind::needs_newer_macos;
  verdict.slice = slice.arch();
  verdict.why = "its " + verdict.slice + " slice is built for macOS " + needs +
                " or later and the guest runs macOS " + *guest + ", so dyld refuses to load it";
  verdict.fix = "use a newer guest image (macOS " + needs +
                " or later), or a build of the program for macOS " + *guest;
  return verdict;
}

} // namespace

const char* verdict_name(VerdictKind kind) {
  static const char* const names[] = {"injectable",
                                      "needs-arm64e-slice",
                                      "wrong-architecture",
                                      "hardened-runtime",
                                      "library-validation",
                                      "not-mach-o",
                                      "needs-newer-macos"};
  return names[static_cast<int>(kind)]; // in VerdictKind's order
}

Verdict judge_program(const ProgramImage& image,
                      const ShimTarget& shim,
                      const std::optional<std::string>& guest_macos) {
  Verdict verdict;
  if (!image.is_macho()) {
    if (!shim.is_darwin()) {
      verdict.why = "the program is " + image.other + "; the " + shim.platform +
                    " shim is preloaded into whatever it runs";
      return verdict;
    }
    verdict.kind = VerdictKind::not_macho;
    verdict.why = "the program is " + image.other +
                  ", not a Mach-O executable; macOS injects libraries into Mach-O programs only";
    verdict.fix = "name the Mach-O executable itself; a script's interpreter (/bin/sh, …) is an "
                  "arm64e system program the shim cannot enter";
    return verdict;
  }
  verdict.archs = image.archs();
  const Slice* slice = nullptr;
  for (const std::string& arch : shim.slices) {
    if ((slice = image.find(arch)) != nullptr) {
      break;
    }
  }
  if (slice == nullptr) {
    return missing_slice(image, shim);
  }
  if (auto refused = newer_macos(*slice, guest_macos)) {
    refused->archs = verdict.archs;
    return *refused;
  }
  verdict.slice = slice->arch();
  if (!shim.is_darwin() || !slice->signature) {
    verdict.why = "its " + verdict.slice + " slice " +
                  (slice->signature ? "matches the shim" : "is not signed");
    return verdict;
  }
  const CodeSignature& signature = *slice->signature;
  const std::string resign =
      "re-sign the program ad hoc without the hardened runtime ('codesign --force --sign - "
      "PROGRAM' in the guest; codesign is part of macOS)";
  if (signature.hardened_runtime() && !signature.allow_dyld_environment) {
    verdict.kind = VerdictKind::hardened_runtime;
    verdict.why = "its " + verdict.slice +
                  " slice is signed with the hardened runtime and without " +
                  k_allow_dyld_environment + ", so dyld ignores DYLD_INSERT_LIBRARIES for it";
    verdict.fix = resign + ", or use a build signed with that entitlement";
    return verdict;
  }
  if (signature.library_validation() && shim.ad_hoc_signed) {
    verdict.kind = VerdictKind::library_validation;
    verdict.why = "its " + verdict.slice + " slice enforces library validation (" +
                  (signature.hardened_runtime() ? "hardened runtime" : "flag 0x2000") +
                  ") without " + k_disable_library_validation +
                  ", so it refuses the ad-hoc signed shim";
    verdict.fix = resign + ", or use a build signed with that entitlement";
    return verdict;
  }
  verdict.why = "its " + verdict.slice + " slice lets dyld inject the shim" +
                std::string(signature.hardened_runtime()
                                ? " (hardened runtime, with both entitlements that allow it)"
                                : "");
  return verdict;
}

} // namespace lume_unlock::macho
