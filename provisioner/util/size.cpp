#include "util/size.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace lume_unlock::util {

namespace {

constexpr std::uint64_t k_kib = 1024;
constexpr std::uint64_t k_mib = k_kib * 1024;
constexpr std::uint64_t k_gib = k_mib * 1024;
constexpr std::uint64_t k_tib = k_gib * 1024;

std::string lower_trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  std::string out(text);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

std::string format_size(std::uint64_t bytes) {
  if (bytes != 0 && bytes % k_gib == 0) {
    return std::to_string(bytes / k_gib) + "GB";
  }
  if (bytes != 0 && bytes % k_mib == 0) {
    return std::to_string(bytes / k_mib) + "MB";
  }
  if (bytes != 0 && bytes % k_kib == 0) {
    return std::to_string(bytes / k_kib) + "KB";
  }
  return std::to_string(bytes) + "b";
}

Result<std::uint64_t> parse_size(std::string_view text) {
  const std::string s = lower_trimmed(text);
  auto fail = [&](const std::string& why) {
    return Error(ErrorCategory::usage,
                 "invalid size '" + std::string(text) + "'",
                 why,
                 "write a size like '16GB', '8192MB' or '80' (GB)");
  };
  struct Suffix {
    std::string_view text;
    std::uint64_t multiplier;
  };
  // Longest suffixes first, so "gb" is not read as "b".
  static constexpr Suffix k_suffixes[] = {
      {"tb", k_tib}, {"gb", k_gib}, {"mb", k_mib}, {"kb", k_kib}, {"b", 1}};
  std::string number = s;
  std::uint64_t multiplier = k_gib;
  for (const auto& suffix : k_suffixes) {
    if (ends_with(s, suffix.text)) {
      number = lower_trimmed(s.substr(0, s.size() - suffix.text.size()));
      multiplier = suffix.multiplier;
      break;
    }
  }
  if (number.empty()) {
    return fail("no number");
  }
  for (char c : number) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') {
      return fail(c == '-' ? "sizes cannot be negative" : "unknown unit (use TB, GB, MB, KB or b)");
    }
  }
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end == nullptr || *end != '\0') {
    return fail("not a number");
  }
  const double bytes = std::round(value * static_cast<double>(multiplier));
  if (!(bytes < 18446744073709551616.0)) {
    return fail("too large");
  }
  return static_cast<std::uint64_t>(bytes);
}

} // namespace lume_unlock::util
