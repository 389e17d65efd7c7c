#pragma once

#include "util/result.hpp"

#include <string>

namespace lume_unlock::lume {

/// The environment variable that names Lume's VM directory root on this host.
inline constexpr const char* k_vm_storage_variable = "LUME_HOME";

/// Where Lume keeps its VM directories on this host: $LUME_HOME, else ~/.lume. The only reader
/// of that variable; messages name it through k_vm_storage_variable.
std::string vm_storage_root();

/// The directory of VM `vm` under `root` (holding config.json, nvram.bin, disk.img and, after a
/// registry pull, .manifest-digest).
std::string vm_directory(const std::string& root, const std::string& vm);

/// Reads `<root>/<vm>/.manifest-digest`, the manifest digest Lume writes after a registry pull
/// (no trailing newline). Fails (category failure) when the file is missing or unreadable,
/// naming the path and pointing at k_vm_storage_variable.
Result<std::string> read_manifest_digest(const std::string& root, const std::string& vm);

} // namespace lume_unlock::lume
