#pragma once

#include "bundle/manifest.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::bundle {

/// The built files for one platform, as the build has them.
struct PlatformSources {
  std::string name;                 ///< "linux-x86_64", "darwin-arm64", ...
  std::string inject_env;           ///< "LD_PRELOAD" or "DYLD_INSERT_LIBRARIES"
  std::string shim;                 ///< installed as liblume-unlock-shim<extension of this file>
  std::optional<std::string> probe; ///< installed as lume-unlock-probe
  std::vector<std::string> support; ///< installed under their own file names
  /// The Mach-O slices of the shim and the probe (darwin platforms; lume-unlock-make-bundle reads
  /// them from the files), written to bundle.json. Empty: not listed.
  std::vector<std::string> shim_slices{};
  std::vector<std::string> probe_slices{};
};

struct BundleSpec {
  std::string version;
  std::string source_revision;
  std::vector<PlatformSources> platforms;
};

/// What build_bundle() wrote.
struct BuiltBundle {
  std::string directory; ///< <out>/shim-bundle
  std::string archive;   ///< <out>/lume-unlock-shim-bundle-<version>.tar.gz
  BundleManifest manifest;
};

/// Writes `<out>/shim-bundle/` (bundle.json + <platform>/<files>, DESIGN §4.4) and the same
/// content as the deterministic archive `<out>/lume-unlock-shim-bundle-<version>.tar.gz`.
/// Files are copied with normalized modes (0755 when the source is executable, else 0644) and
/// hashed as copied. The directory is assembled beside the old one and swapped in only when
/// complete. Fails on a bad version, platform name or injection variable, a platform given twice,
/// two files with one name in a platform, an unreadable source, or a manifest that
/// parse_bundle_manifest() would refuse (e.g. a darwin-arm64 shim without an arm64 slice).
Result<BuiltBundle> build_bundle(const BundleSpec& spec, const std::string& out);

} // namespace lume_unlock::bundle
