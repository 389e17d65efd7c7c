#pragma once

#include "util/result.hpp"
#include "util/text.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::macho {

/// Where the reader gets a program's bytes: up to `length` bytes at `offset`, fewer only at the
/// end of the file (none past it). The reader asks only for the parts it needs, each bounded, so
/// a source may be a remote file (apply/program_check reads over SFTP).
using ReadAt = std::function<Result<std::string>(std::uint64_t offset, std::size_t length)>;

/// A source over bytes in memory; `bytes` must outlive it.
ReadAt read_from_bytes(std::string_view bytes);

/// Exactly `length` bytes at `offset`, or an error (category usage) saying that the file is
/// truncated where `what` should be.
Result<std::string>
read_exact(const ReadAt& source, std::uint64_t offset, std::size_t length, const std::string& what);

/// a + b <= limit, without overflow.
bool fits(std::uint64_t a, std::uint64_t b, std::uint64_t limit);

/// The unsigned integer of 4 (or 8) bytes at `at` of `bytes`, which the caller has checked holds
/// them; big-endian when `big`, else little-endian.
std::uint32_t u32(std::string_view bytes, std::size_t at, bool big);
std::uint64_t u64(std::string_view bytes, std::size_t at, bool big);

/// The error of a malformed file: category usage, "<what>: <why>", a hint that the file is damaged.
Error malformed(const std::string& what, const std::string& why);

inline constexpr std::uint32_t k_cpu_type_x86 = 7;
inline constexpr std::uint32_t k_cpu_type_arm = 12;
inline constexpr std::uint32_t k_cpu_abi64 = 0x01000000;
inline constexpr std::uint32_t k_cpu_type_x86_64 = k_cpu_type_x86 | k_cpu_abi64;
inline constexpr std::uint32_t k_cpu_type_arm64 = k_cpu_type_arm | k_cpu_abi64;
/// The high byte of a cpusubtype holds capability bits (CPU_SUBTYPE_MASK), not the subtype:
/// arm64e binaries say 0x80000002 (the pointer-authentication ABI bit), x86_64 ones 0x80000003.
inline constexpr std::uint32_t k_cpu_subtype_capability_mask = 0xff000000;
inline constexpr std::uint32_t k_cpu_subtype_arm64e = 2;
inline constexpr std::uint32_t k_cpu_subtype_x86_64_h = 8;

/// The name lipo gives a slice: "arm64", "arm64e", "x86_64", "x86_64h", "i386", "arm", or
/// "cputype 0x…/cpusubtype 0x…" for anything else.
std::string arch_name(std::uint32_t cputype, std::uint32_t cpusubtype);

inline constexpr const char* k_allow_dyld_environment =
    "com.apple.security.cs.allow-dyld-environment-variables";
inline constexpr const char* k_disable_library_validation =
    "com.apple.security.cs.disable-library-validation";

/// True when the XML property list `plist` (an entitlements blob) has `<key>KEY</key>` followed,
/// after white space only, by `<true/>`. Anything else (false, absent, another value, malformed
/// text) is false: an entitlement is only granted when it is plainly there.
bool entitlement_is_true(std::string_view plist, std::string_view key);

/// CodeDirectory flags (<Kernel/kern/cs_blobs.h>).
inline constexpr std::uint32_t k_cs_adhoc = 0x2;
inline constexpr std::uint32_t k_cs_require_library_validation = 0x2000;
inline constexpr std::uint32_t k_cs_runtime = 0x10000;
inline constexpr std::uint32_t k_cs_linker_signed = 0x20000;

/// What a slice's code signature (the SuperBlob LC_CODE_SIGNATURE points at) says about
/// injection.
struct CodeSignature {
  std::uint32_t flags = 0; ///< the CodeDirectory's flags
  bool has_entitlements = false;
  bool allow_dyld_environment = false;     ///< com.apple.security.cs.allow-dyld-environment-…
  bool disable_library_validation = false; ///< com.apple.security.cs.disable-library-validation

  bool hardened_runtime() const { return (flags & k_cs_runtime) != 0; }
  bool ad_hoc() const { return (flags & k_cs_adhoc) != 0; }
  /// Library validation is on when asked for explicitly, and implied by the hardened runtime;
  /// com.apple.security.cs.disable-library-validation turns it off.
  bool library_validation() const;
};

/// Upper bounds of what is read from a signature; anything larger is refused as hostile.
inline constexpr std::uint32_t k_max_signature_blobs = 64;
inline constexpr std::size_t k_max_entitlements = 1024 * 1024;

/// Reads the SuperBlob of `size` bytes at `offset` of `source`: its index, the CodeDirectory's
/// flags (slot 0) and the XML entitlements (slot 5), asking `source` only for those bytes. Every
/// offset and length is checked against the blob that holds it; a malformed signature is an error
/// (category usage).
Result<CodeSignature>
read_code_signature(const ReadAt& source, std::uint64_t offset, std::uint64_t size);

/// One architecture of a program: the whole file when it is thin, one fat_arch when it is fat.
struct Slice {
  std::uint32_t cputype = 0;
  std::uint32_t cpusubtype = 0;           ///< capability bits included
  std::uint32_t filetype = 0;             ///< MH_EXECUTE = 2, MH_DYLIB = 6, …
  std::uint64_t offset = 0;               ///< in the file
  std::optional<CodeSignature> signature; ///< absent when the slice has no LC_CODE_SIGNATURE
  /// The oldest macOS the slice loads on, packed as LC_BUILD_VERSION's minos (platform macOS)
  /// or LC_VERSION_MIN_MACOSX's version hold it (X.Y.Z in 16.8.8 bits); absent when it names
  /// none.
  std::optional<std::uint32_t> min_macos;

  std::string arch() const; ///< arch_name() of cputype and cpusubtype
};

/// What a file is, as far as injecting a library into it goes.
struct ProgramImage {
  /// Empty when the file is not a Mach-O; then `other` says what it is.
  std::vector<Slice> slices;
  bool fat = false;
  /// "a script (#!)", "an ELF file", "a Java class file", "an empty file", "a file of another
  /// kind": set when slices is empty.
  std::string other;

  bool is_macho() const { return !slices.empty(); }
  /// The slices' arch names in file order, space separated ("x86_64 arm64").
  std::string archs() const;
  /// The slice of architecture `arch`, if any.
  const Slice* find(const std::string& arch) const;
};

/// Upper bounds: a file claiming more is refused as hostile (real programs are far below them).
inline constexpr std::uint32_t k_max_fat_slices = 32;
inline constexpr std::uint32_t k_max_load_commands_size = 1024 * 1024;

/// Reads a program's headers through `source`: the fat header (32- or 64-bit) and its fat_arch
/// entries, each slice's mach_header (32- or 64-bit, either byte order) and load commands (the
/// minimum macOS of LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX), and the code signature
/// LC_CODE_SIGNATURE points at (read_code_signature). It reads only those bytes,
/// each request bounded. A file that does not start with a Mach-O or fat magic is not an error
/// (`other` says what it is); a Mach-O whose offsets or lengths do not fit, or that is truncated,
/// is (category usage). Errors of `source` pass through unchanged.
Result<ProgramImage> read_program_image(const ReadAt& source);

/// A packed version as otool prints it: "26.0", "13.3", "15.7.2" (.Z only when it is not 0).
std::string format_version(std::uint32_t packed);

/// Packs a macOS version ("26", "26.0", "15.7.2": one to three numbers, the first at most 65535,
/// the others at most 255), so that versions compare as numbers; nullopt for anything else.
std::optional<std::uint32_t> parse_version(std::string_view text);

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
