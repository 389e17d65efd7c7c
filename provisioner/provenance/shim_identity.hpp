#pragma once

// Which shim ran in a VM, in words, from its provenance record: Cua's certified build, another
// externally built dylib, or lume-unlock's own.

#include "provenance/provenance.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::provenance {

/// One dylib of Cua's certified release (trycua/cua b296ec9c,
/// libs/lume/metal-capability-shim/Release/SHA256SUMS; docs/sources.md).
struct CertifiedBuild {
  const char* file;   ///< its name in SHA256SUMS
  const char* sha256; ///< its digest there
};

/// The certified dylibs: LumeMetalCapabilities-arm64.dylib (the build every published figure
/// used) and LumeMetalCapabilities-arm64e.dylib.
const std::vector<CertifiedBuild>& certified_builds();

/// The certified build with this digest (lower-case hex), if it is one.
std::optional<CertifiedBuild> certified_build(std::string_view sha256);

/// "certified upstream build 515b9d84…" (an external dylib whose digest is a certified one),
/// "external shim <sha256>" (any other external dylib), "lume-unlock shim <sha256>" (the
/// bundle's dylib, the first of `files`); empty when the record names no shim file.
std::string shim_that_ran(const ShimInfo& shim);

} // namespace lume_unlock::provenance
