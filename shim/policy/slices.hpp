#pragma once
// Which Mach-O slices a file carries, from its first bytes: the shim asks it of its own file to
// choose the rule for children (DESIGN §4.2). Constants from Apple's <mach-o/fat.h> and
// <mach/machine.h> (docs/sources.md).
#include <cstddef>

namespace lume_unlock::policy {

/// True when `bytes` (the start of a file) is a fat Mach-O (FAT_MAGIC or FAT_MAGIC_64, big-endian)
/// listing both an arm64 and an arm64e slice: a dylib every arm64 and arm64e child can load.
/// False for a thin file, another format, or a header cut short.
bool carries_arm64_and_arm64e(const unsigned char* bytes, std::size_t size) noexcept;

} // namespace lume_unlock::policy
