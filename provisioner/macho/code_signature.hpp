#pragma once

#include "macho/byte_source.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace lume_unlock::macho {

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

} // namespace lume_unlock::macho
