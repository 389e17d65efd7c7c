#pragma once

#include "lume/api.hpp"
#include "lume/types.hpp"
#include "util/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::lume {

/// Where Lume keeps VM `vm` on this host, asked of Lume itself (LUME_HOME does not move Lume's
/// storage; Settings.swift): `<location path>/<vm>`, the location being the one GET
/// /lume/vms/NAME names (`locationName`, a name or a direct path), else Lume's default
/// location (GET /lume/config: `defaultLocationName` looked up by name in `vmLocations`) when
/// the VM does not exist yet or a failed pull masks it. A leading "~" is Lume's home, the same
/// user's $HOME. Fails (lume_api) when Lume cannot be asked or names a location it does not list.
Result<std::string> vm_directory(LumeApi& lume, const std::string& vm);

/// The path of Lume's default storage location (GET /lume/config), "~" expanded: where a pull
/// without `storage` puts its VM. Fails (lume_api) like vm_directory().
Result<std::string> default_location_path(LumeApi& lume);

/// Reads `<vm_dir>/.manifest-digest`, the manifest digest Lume writes after a registry pull
/// (no trailing newline). Fails (category failure) when the file is missing or unreadable,
/// naming the path.
Result<std::string> read_manifest_digest(const std::string& vm_dir);

/// Where a macOS guest automounts the directories a run request shares: Lume gives every one
/// the automount tag (VZVirtioFileSystemDeviceConfiguration.macOSGuestAutomountTag), and macOS
/// mounts that device here (docs/sources.md, "Lume's shared directories").
inline constexpr const char* k_macos_share_root = "/Volumes/My Shared Files";

/// The hidden entry Lume adds first to a macOS guest's automounted share (an empty, read-only
/// directory), so a directory of this name gets a suffix like any duplicate.
inline constexpr const char* k_live_share_placeholder = ".lume-live-share";

/// The name under which a macOS guest sees each of `shared` inside k_macos_share_root, in
/// order, as Lume 0.5.3 names the entries of its multiple-directory share: the last component
/// of the host path (Foundation's lastPathComponent; "Shared Folder" when it is empty), and a name
/// already taken gets " (2)", " (3)"… in request order, the placeholder counting as taken.
std::vector<std::string> share_entry_names(const std::vector<SharedDirectory>& shared);

/// The guest path of `relative` inside the shared directory `shared[index]`, below `root`
/// (k_macos_share_root on a real guest).
std::string guest_path_in_share(std::string_view root,
                                const std::vector<SharedDirectory>& shared,
                                std::size_t index,
                                std::string_view relative);

} // namespace lume_unlock::lume
