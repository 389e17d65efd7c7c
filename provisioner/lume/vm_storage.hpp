#pragma once

#include "lume/api.hpp"
#include "util/result.hpp"

#include <string>

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

} // namespace lume_unlock::lume
