#pragma once

#include "util/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace lume_unlock::util {

/// A byte count written the way Lume's parseSize reads it (reference §3.0): the largest of
/// GB/MB/KB that divides it exactly ("16GB" for 16 GiB), else plain bytes ("1000b").
std::string format_size(std::uint64_t bytes);

/// "16 MiB", "512 KiB" or "100 bytes": how errors name a size limit.
std::string describe_limit(std::uint64_t bytes);

/// Parses a size the way Lume does: case-insensitive tb/gb/mb/kb/b suffix (binary multiples),
/// no suffix = GB, surrounding whitespace ignored, decimal fractions allowed when they come to
/// whole bytes ("8.5GB", "0.5KB"). Fails with a usage error for negative, non-numeric, overflowing,
/// fractional-byte ("1.3b", "0.0001KB") or unknown-suffix input ("16G", "16GiB").
Result<std::uint64_t> parse_size(std::string_view text);

} // namespace lume_unlock::util
