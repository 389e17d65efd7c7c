#pragma once

#include "util/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::apply {

/// Schema tag of the installed-shim record.
inline constexpr const char* k_installed_shim_schema = "lume-unlock/installed-shim/v1";

/// One installed file: its path in the guest and its SHA-256.
struct InstalledFile {
  std::string path;
  std::string sha256;
  bool operator==(const InstalledFile& other) const {
    return path == other.path && sha256 == other.sha256;
  }
};

/// Which shim is installed in a guest: <support>/shim/current.json, written in the same payload
/// as the files it names (so it never names files that are not there). The shim directory is
/// content-addressed (an upgrade is a new directory); this record is the pointer to the current
/// one, read by `allow`, `exec` and `status`, which have no bundle at hand.
struct InstalledShim {
  std::string bundle_version;
  std::string platform;   ///< "darwin-arm64", "linux-x86_64"
  std::string inject_env; ///< DYLD_INSERT_LIBRARIES or LD_PRELOAD
  InstalledFile shim;
  /// The shim is an externally built dylib (recipe shim.dylib, e.g. Cua's certified build): it
  /// exports no lume_unlock_shim_state and reads no guard file or kill switch, so only the
  /// LaunchAgent's environment scopes it. Written as "external": true, absent otherwise.
  bool external = false;
  std::optional<InstalledFile> probe;
  std::vector<InstalledFile> support;

  /// The file name of the shim (last path component), for GuestLayout::make.
  std::string shim_file_name() const;
  /// The architecture part of the platform ("arm64" of "darwin-arm64").
  std::string arch() const;
  bool operator==(const InstalledShim& other) const;
};

/// What keeps an installed shim to the enabled programs, in words for `verify`: the guard file
/// and the LaunchAgents' environment for lume-unlock's shim; for an external one "scoped by the
/// LaunchAgent environment only (upstream shim has no guard file)".
std::string shim_scope(const InstalledShim& shim);

/// <support>/shim/current.json for the guest user's `home`.
std::string installed_shim_record_path(const std::string& home);

/// The record's bytes: keys sorted, two-space indent, final newline (same record, same bytes).
std::string render_installed_shim(const InstalledShim& record);

/// Parses the record; errors (category verification) name `source` and the problem.
Result<InstalledShim> parse_installed_shim(std::string_view text, const std::string& source);

} // namespace lume_unlock::apply
