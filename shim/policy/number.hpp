#pragma once
// Whole-string unsigned number parsing for the shim's environment variables (DESIGN §4.1).
#include <cstdint>
#include <string_view>

namespace lume_unlock::policy {

enum class NumberError { none, empty, invalid_character, overflow };

struct ParsedNumber {
  NumberError error = NumberError::empty;
  std::uint64_t value = 0;
  bool ok() const { return error == NumberError::none; }
};

/// Parses `text` as a decimal ("1009") or 0x/0X-prefixed hexadecimal ("0x3F1") unsigned 64-bit
/// number. The whole string must be digits: signs, spaces, a bare "0x" or trailing characters are
/// `invalid_character`, "" is `empty`, values above 2^64-1 are `overflow`. Never allocates or
/// throws.
ParsedNumber parse_unsigned(std::string_view text) noexcept;

} // namespace lume_unlock::policy
