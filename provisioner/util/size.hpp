#pragma once

#include "util/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace lume_unlock::util {

/// A byte count written the way Lume's parseSize reads it (reference §3.0): the largest of
/// GB/MB/KB that divides it exactly ("16GB" for 16 GiB), else plain bytes ("1000b").
std::string format_size(std::uint64_t bytes);

/// Parses a size the way Lume does: case-insensitive tb/gb/mb/kb/b suffix (binary multiples),
/// no suffix = GB, surrounding whitespace ignored, fractions rounded. Fails with a usage error
/// for negative, non-numeric, overflowing or unknown-suffix input ("16G", "16GiB").
Result<std::uint64_t> parse_size(std::string_view text);

} // namespace lume_unlock::util
