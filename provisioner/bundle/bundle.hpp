#pragma once

#include "util/archive.hpp"
#include "util/result.hpp"

#include <map>
#include <memory>
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

/// A shim bundle on disk whose files all matched bundle.json when it was loaded. A bundle loaded
/// from an archive keeps its extracted copy alive for as long as any copy of this object exists.
class LoadedBundle {
public:
  const std::string& root() const { return m_root; }
  const BundleManifest& manifest() const { return m_manifest; }
  /// Where `file` is on this machine.
  std::string local_path(const BundleFile& file) const { return m_root + "/" + file.path; }

private:
  friend Result<LoadedBundle> load_verified(const std::string& directory, const std::string& what);
  friend Result<LoadedBundle> load_bundle_archive(const std::string& archive,
                                                  const std::string& work_directory,
                                                  const util::ExtractLimits& limits);
  std::string m_root;
  BundleManifest m_manifest;
  std::shared_ptr<void> m_extracted; ///< removes the extracted copy when the last owner goes
};

/// load_bundle_directory() with `what` naming the bundle in errors (a directory or an archive).
Result<LoadedBundle> load_verified(const std::string& directory, const std::string& what);

/// Reads `<directory>/bundle.json`, validates it and verifies every file.
Result<LoadedBundle> load_bundle_directory(const std::string& directory);

/// Extracts `archive` (lume-unlock-shim-bundle-<version>.tar.gz, bundle.json at its root) through
/// util::safe_extract into a new temporary directory under `work_directory` (the system's
/// temporary directory when empty), then loads it as load_bundle_directory() does.
Result<LoadedBundle> load_bundle_archive(const std::string& archive,
                                         const std::string& work_directory = {},
                                         const util::ExtractLimits& limits = {});

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
