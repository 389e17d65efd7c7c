#pragma once

#include "util/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace lume_unlock::recipe {

/// Parses a size the way Lume does (reference lume-api.md §3.0): a number (fractions allowed)
/// followed by TB, GB, MB, KB or B, case-insensitive, binary multiples ("16GB" = 16 GiB).
/// Unlike Lume we require the unit: "16" is ambiguous to a reader, and "16G" / "16GiB" are
/// rejected by Lume itself, so both get an error that shows the accepted spelling.
Result<std::uint64_t> parse_size(std::string_view text);

/// The size as Lume's API expects it: the largest unit that divides it exactly ("16GB").
std::string format_size_for_lume(std::uint64_t bytes);

} // namespace lume_unlock::recipe
