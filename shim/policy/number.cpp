#include "policy/number.hpp"

namespace lume_unlock::policy {
namespace {

int digit_value(char c, unsigned base) noexcept {
  int v = -1;
  if (c >= '0' && c <= '9') {
    v = c - '0';
  } else if (base == 16 && c >= 'a' && c <= 'f') {
    v = c - 'a' + 10;
  } else if (base == 16 && c >= 'A' && c <= 'F') {
    v = c - 'A' + 10;
  }
  return v;
}

} // namespace

ParsedNumber parse_unsigned(std::string_view text) noexcept {
  ParsedNumber result;
  if (text.empty()) {
    result.error = NumberError::empty;
    return result;
  }
  unsigned base = 10;
  std::size_t start = 0;
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    start = 2;
  }
  if (start == text.size()) { // "0x" with no digits
    result.error = NumberError::invalid_character;
    return result;
  }
  std::uint64_t value = 0;
  for (std::size_t i = start; i < text.size(); ++i) {
    const int d = digit_value(text[i], base);
    if (d < 0) {
      result.error = NumberError::invalid_character;
      return result;
    }
    if (value > (UINT64_MAX - static_cast<std::uint64_t>(d)) / base) {
      result.error = NumberError::overflow;
      return result;
    }
    value = value * base + static_cast<std::uint64_t>(d);
  }
  result.error = NumberError::none;
  result.value = value;
  return result;
}

} // namespace lume_unlock::policy
