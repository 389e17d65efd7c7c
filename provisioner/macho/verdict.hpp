#pragma once

#include "macho/program_image.hpp"
#include "util/text.hpp"

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::macho {

/// Whether the shim can be injected into a program, and if not, what stops it.
enum class VerdictKind {
  injectable,
  needs_arm64e_slice, ///< arm64e only, and the shim has no arm64e slice
  wrong_architecture, ///< no slice the shim has (e.g. x86_64 only)
  hardened_runtime,   ///< dyld ignores DYLD_* for it (no allow-dyld-environment-variables)
  library_validation, ///< it refuses the ad-hoc signed shim (no disable-library-validation)
  not_macho,          ///< a script or another kind of file: macOS injects into Mach-O only
  needs_newer_macos,  ///< built for a newer macOS than the guest's: dyld refuses to load it
};

/// Stable name for JSON: "injectable", "needs-arm64e-slice", "wrong-architecture",
/// "hardened-runtime", "library-validation", "not-mach-o", "needs-newer-macos".
const char* verdict_name(VerdictKind kind);

/// The shim a program is judged against.
struct ShimTarget {
  std::string platform;            ///< "darwin-arm64", "linux-x86_64"
  std::vector<std::string> slices; ///< the shim's slices ("arm64")
  /// Every bundle's shim is (ld64.lld signs ad hoc); false only for a shim signed by the
  /// program's own team, which library validation would let in.
  bool ad_hoc_signed = true;
  bool is_darwin() const { return util::starts_with(platform, "darwin-"); }
};

struct Verdict {
  VerdictKind kind = VerdictKind::injectable;
  std::string archs; ///< the program's slices ("arm64 x86_64"), empty when not a Mach-O
  std::string slice; ///< the slice judged ("arm64"), empty when none fits
  std::string why;   ///< one sentence: what was found
  std::string fix;   ///< what to do (empty when injectable)
  bool refused() const { return kind != VerdictKind::injectable; }
};

/// Judges `image` against `shim`. On a darwin platform, in this order: not a Mach-O; no slice the
/// shim has (arm64e-only gets needs_arm64e_slice, with a fix that says the bundle has no arm64e
/// slice); the matching slice needs a newer macOS than `guest_macos` (`sw_vers -productVersion`;
/// no check when absent or not a version); the matching slice's signature has the hardened runtime
/// without allow-dyld-environment-variables; library validation (explicit, or implied by the
/// hardened runtime) without disable-library-validation while the shim is ad hoc; else injectable.
/// On other platforms (linux-x86_64, the emulated test platform, injected with LD_PRELOAD) only a
/// Mach-O without the shim's slice, or that needs a newer macOS, is refused; any other file is
/// injectable.
Verdict judge_program(const ProgramImage& image,
                      const ShimTarget& shim,
                      const std::optional<std::string>& guest_macos = std::nullopt);

} // namespace lume_unlock::macho
