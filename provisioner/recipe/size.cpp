#include "size.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace lume_unlock::recipe {

namespace {

struct Unit {
  const char* suffix;
  std::uint64_t multiplier;
};

// Longest suffix first so "GB" is not read as "B".
constexpr Unit k_units[] = {{"TB", 1ULL << 40}, {"GB", 1ULL << 30}, {"MB", 1ULL << 20},
                            {"KB", 1ULL << 10}, {"B", 1ULL}};

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

Error size_error(std::string_view text, const std::string& why) {
  return Error(ErrorCategory::usage, "'" + std::string(text) + "' is not a size", why,
               "write it like 16GB or 8192MB (units: TB, GB, MB, KB, B)");
}

} // namespace

Result<std::uint64_t> parse_size(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  const std::string u = upper(s);
  for (const Unit& unit : k_units) {
    const std::string suffix = unit.suffix;
    if (u.size() <= suffix.size() || u.compare(u.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    std::string number = u.substr(0, u.size() - suffix.size());
    while (!number.empty() && number.back() == ' ') {
      number.pop_back();
    }
    if (number.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos) {
      return size_error(text, "the unit must be TB, GB, MB, KB or B");
    }
    if (number.empty() || number.find_first_not_of("0123456789.") != std::string::npos ||
        number.find('.') != number.rfind('.')) {
      return size_error(text, "the amount must be a plain non-negative number");
    }
    const double value = std::strtod(number.c_str(), nullptr);
    const double bytes = std::round(value * static_cast<double>(unit.multiplier));
    if (!(bytes >= 1.0) || bytes > 9.0e18) {
      return size_error(text, "it must be at least 1 byte and at most 8 EB");
    }
    return static_cast<std::uint64_t>(bytes);
  }
  if (!u.empty() && u.find_first_not_of("0123456789.") == std::string::npos) {
    return size_error(text, "the unit is missing");
  }
  return size_error(text, "the unit must be TB, GB, MB, KB or B");
}

std::string format_size_for_lume(std::uint64_t bytes) {
  for (const Unit& unit : k_units) {
    if (bytes >= unit.multiplier && bytes % unit.multiplier == 0) {
      return std::to_string(bytes / unit.multiplier) + unit.suffix;
    }
  }
  return std::to_string(bytes) + "B";
}

} // namespace lume_unlock::recipe
