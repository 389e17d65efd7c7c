#pragma once

#include "bundle/bundle.hpp"
#include "guest/guest_layout.hpp"
#include "guest/guest_records.hpp"
#include "guest/session.hpp"
#include "recipe/recipe.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lume_unlock::apply {

/// Schema tag of the installed-shim record.
inline constexpr const char* k_installed_shim_schema = "lume-unlock/installed-shim/v1";

/// One installed file: its path in the guest and its SHA-256, and for a darwin shim the Mach-O
/// slices the bundle listed for it (empty: not listed, or not a Mach-O file).
struct InstalledFile {
  std::string path;
  std::string sha256;
  std::vector<std::string> slices{};
  bool operator==(const InstalledFile& other) const {
    return path == other.path && sha256 == other.sha256 && slices == other.slices;
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
  /// Which processes started by an unlocked program keep the shim (issue 42, the probe's
  /// `shim.children`): "inherit" when the shim carries an arm64e slice (children keep the
  /// injection variable and the guard file decides per executable), "removed" when it does not
  /// (an arm64-only dylib, or the Linux .so: the shim removes itself from the variable at load,
  /// so children start stock), "unknown" for a darwin record that lists no slices. An external
  /// shim (Cua's certified build) always leaves the variable to children: "inherit".
  const char* child_rule() const;
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

/// What install_shim() did.
struct ShimInstallReport {
  bool changed = false;       ///< false: every file was already in place with its SHA-256
  std::string platform;       ///< the bundle platform installed ("linux-x86_64")
  InstalledShim installed;    ///< the record now in the guest (current.json)
  std::uint64_t commands = 0; ///< remote commands run
};

/// Installs the bundle's entry for this guest (facts.kernel/machine → platform; an error of
/// category verification naming the bundle's platforms when it has none for the guest).
/// Observes first with ONE command (`shasum -a 256` of every expected path, current.json
/// included) and returns changed=false when all match; otherwise installs every file and
/// current.json through install_payload() (2–3 commands). Idempotent. With `external` (a
/// recipe's shim.dylib, its digest checked by the caller's preflight) that file is installed as
/// the shim, content-addressed by its own digest, instead of the bundle's; the guest's install
/// checks its SHA-256 again after the transfer.
Result<ShimInstallReport>
install_shim(guest::GuestSession& session,
             const bundle::LoadedBundle& bundle,
             const guest::GuestFacts& facts,
             const std::optional<recipe::VerifiedExternalShim>& external = {});

} // namespace lume_unlock::apply
