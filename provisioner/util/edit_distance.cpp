#include "edit_distance.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <numeric>

namespace lume_unlock::util {

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

} // namespace lume_unlock::util
