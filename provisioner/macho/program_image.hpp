#pragma once

#include "macho/byte_source.hpp"
#include "macho/code_signature.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::macho {

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

/// The description of a file that is not a Mach-O, from its first bytes ("a script (#!)", …).
std::string describe_other(std::string_view head);

} // namespace lume_unlock::macho
