#include "util/text.hpp"

namespace lume_unlock::util {

std::string trim(std::string_view text, std::string_view chars) {
  const std::size_t first = text.find_first_not_of(chars);
  if (first == std::string_view::npos) {
    return {};
  }
  return std::string(text.substr(first, text.find_last_not_of(chars) - first + 1));
}

std::optional<std::uint64_t> parse_decimal(std::string_view text) {
  if (text.empty() || text.size() > 19) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

std::string base_name(std::string_view path) {
  return std::string(path.substr(path.find_last_of('/') + 1));
}

std::string plural(std::size_t count, std::string_view noun, std::string_view plural_noun) {
  std::string out = std::to_string(count) + " ";
  if (count == 1) {
    return out.append(noun);
  }
  return plural_noun.empty() ? out.append(noun) + "s" : out.append(plural_noun);
}

} // namespace lume_unlock::util
