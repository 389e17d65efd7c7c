#include "util/text.hpp"

#include <algorithm>
#include <numeric>
#include <random>

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

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view input,
                                         const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(1, input.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    std::size_t d = edit_distance(input, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string unknown_key_hint(std::string_view input, const std::vector<std::string>& known) {
  const std::string hint = "known keys here: " + join(known, ", ");
  const auto match = closest_match(input, known);
  return match ? "did you mean '" + *match + "'? (" + hint + ")" : hint;
}

std::string random_hex(std::size_t digits) {
  std::random_device device;
  std::uniform_int_distribution<unsigned> digit(0, 15);
  std::string out;
  for (std::size_t i = 0; i < digits; ++i) {
    out += "0123456789abcdef"[digit(device)];
  }
  return out;
}

} // namespace lume_unlock::util
