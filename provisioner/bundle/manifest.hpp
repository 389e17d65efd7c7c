#pragma once

#include "util/result.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::bundle {

/// The value of bundle.json's "schema" key (DESIGN §4.4).
inline constexpr const char* k_bundle_schema = "lume-unlock/shim-bundle/v1";
/// The manifest's file name at the bundle's root.
inline constexpr const char* k_manifest_name = "bundle.json";

/// One file of the bundle: its path relative to the bundle's root and its SHA-256 (lower-case hex).
struct BundleFile {
  std::string path;
  std::string sha256;
  /// The Mach-O slices of a darwin file ("arm64"), as lume-unlock-make-bundle read them; empty
  /// for other files (the key is then absent). What a program's verdict says the bundle has.
  std::vector<std::string> slices{};
  bool operator==(const BundleFile& other) const {
    return path == other.path && sha256 == other.sha256 && slices == other.slices;
  }
};

/// What the provisioner installs for one guest platform ("darwin-arm64", "linux-x86_64", ...).
struct PlatformEntry {
  std::string inject_env; ///< "DYLD_INSERT_LIBRARIES" or "LD_PRELOAD"
  BundleFile shim;
  /// Always set in a parsed or built manifest (both refuse an entry without one); optional only
  /// while an entry is being assembled.
  std::optional<BundleFile> probe;
  std::vector<BundleFile> support; ///< libraries the shim or probe needs beside them
  bool operator==(const PlatformEntry& other) const {
    return inject_env == other.inject_env && shim == other.shim && probe == other.probe &&
           support == other.support;
  }
};

/// bundle.json (DESIGN §4.4).
struct BundleManifest {
  std::string version;
  std::string source_revision;
  std::map<std::string, PlatformEntry> platforms;

  /// Every file named by every platform, in platform order (shim, probe, support).
  std::vector<BundleFile> files() const;
  bool operator==(const BundleManifest& other) const {
    return version == other.version && source_revision == other.source_revision &&
           platforms == other.platforms;
  }
};

/// True for "<os>-<arch>" names: lower-case letters and digits, one dash, then letters, digits or
/// '_'.
bool is_platform_name(std::string_view name);

/// True for the version strings a bundle may carry (they become part of the archive's file name):
/// letters, digits, '.', '_', '+' and '-', starting with a letter or digit.
bool is_bundle_version(std::string_view version);

/// Parses and validates bundle.json: exactly the keys of DESIGN §4.4, the schema, safe relative
/// canonical paths, 64-hex digests, known injection variables, and "slices" (optional on a file:
/// distinct arch names; a darwin-<arch> entry's shim and probe, when they list slices, must have
/// <arch>). Errors are util/json_reader's: "invalid bundle.json: <pointer>: <what>" (usage).
Result<BundleManifest> parse_bundle_manifest(std::string_view text);

/// bundle.json's text: keys sorted, two-space indent, a final newline. Same manifest, same bytes.
std::string render_bundle_manifest(const BundleManifest& manifest);

/// The bundle platform name for a guest: `system` is `uname -s` ("Darwin", "Linux"), `arch` is
/// `uname -m`, or the program's own architecture when it differs (an arm64e binary on an arm64
/// kernel gets the arm64e dylib). Darwin+arm64 -> darwin-arm64, Darwin+arm64e -> darwin-arm64e,
/// Linux+x86_64 -> linux-x86_64 (aarch64 is spelled arm64, amd64 x86_64).
/// Fails for a system other than Darwin or Linux.
Result<std::string> guest_platform_name(std::string_view system, std::string_view arch);

/// The entry of `manifest` that matches the guest, with its name. When the bundle has none the
/// error lists the platforms it has (category verification).
struct SelectedPlatform {
  std::string name;
  PlatformEntry entry;
};
Result<SelectedPlatform>
select_platform(const BundleManifest& manifest, std::string_view system, std::string_view arch);

} // namespace lume_unlock::bundle
