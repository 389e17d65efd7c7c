#include "util/size.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <utility>

namespace lume_unlock::util {

namespace {

constexpr std::uint64_t k_kib = 1024;
constexpr std::uint64_t k_mib = k_kib * 1024;
constexpr std::uint64_t k_gib = k_mib * 1024;

std::string lower_trimmed(std::string_view text) {
  std::string out = trim(text, " \t\n\v\f\r"); // what std::isspace takes
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

using Wide = unsigned __int128;

/// The bytes of `fraction` (the decimal digits after the point) of a unit of 2^shift bytes:
/// fraction / 10^k units = fraction * 2^shift / (5^k * 2^k) bytes, whole only when 5^k divides
/// the fraction and enough factors of two remain. Nothing when it is not a whole number.
std::optional<Wide> fraction_bytes(const std::string& fraction, unsigned shift) {
  Wide value = 0;
  Wide five_k = 1;
  for (char c : fraction) {
    value = value * 10 + static_cast<unsigned>(c - '0');
    five_k *= 5;
  }
  const unsigned k = static_cast<unsigned>(fraction.size());
  if (value % five_k != 0) {
    return std::nullopt;
  }
  value /= five_k;
  if (k > shift) {
    const Wide two_excess = Wide(1) << (k - shift);
    if (value % two_excess != 0) {
      return std::nullopt;
    }
    return value / two_excess;
  }
  return value << (shift - k);
}

} // namespace

std::string format_size(std::uint64_t bytes) {
  for (const auto& [unit, name] : {std::pair{k_gib, "GB"}, {k_mib, "MB"}, {k_kib, "KB"}}) {
    if (bytes != 0 && bytes % unit == 0) {
      return std::to_string(bytes / unit) + name;
    }
  }
  return std::to_string(bytes) + "b";
}

std::string describe_limit(std::uint64_t bytes) {
  for (const auto& [unit, name] : {std::pair{k_mib, " MiB"}, {k_kib, " KiB"}}) {
    if (bytes >= unit && bytes % unit == 0) {
      return std::to_string(bytes / unit) + name;
    }
  }
  return std::to_string(bytes) + " bytes";
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
    unsigned shift; ///< the multiplier is 2^shift
  };
  // Longest suffixes first, so "gb" is not read as "b".
  static constexpr Suffix k_suffixes[] = {{"tb", 40}, {"gb", 30}, {"mb", 20}, {"kb", 10}, {"b", 0}};
  std::string number = s;
  unsigned shift = 30;
  for (const auto& suffix : k_suffixes) {
    if (ends_with(s, suffix.text)) {
      number = lower_trimmed(s.substr(0, s.size() - suffix.text.size()));
      shift = suffix.shift;
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
  // Exact decimal arithmetic, not floating point: a size is a whole number of bytes, and doubles
  // round both huge values and fractions silently.
  const auto dot = number.find('.');
  std::string whole = number.substr(0, dot);
  std::string fraction = dot == std::string::npos ? std::string() : number.substr(dot + 1);
  if (fraction.find('.') != std::string::npos || (whole.empty() && fraction.empty())) {
    return fail("not a number");
  }
  while (!fraction.empty() && fraction.back() == '0') {
    fraction.pop_back();
  }
  whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size()));
  constexpr std::size_t k_max_whole_digits = 20;    // 2^64 has 20 digits
  constexpr std::size_t k_max_fraction_digits = 36; // 5^36 and 10^36 still fit in 128 bits
  if (whole.size() > k_max_whole_digits) {
    return fail("too large");
  }
  if (fraction.size() > k_max_fraction_digits) {
    return fail("not a whole number of bytes");
  }
  Wide whole_value = 0;
  for (char c : whole) {
    whole_value = whole_value * 10 + static_cast<unsigned>(c - '0');
  }
  Wide bytes = whole_value << shift;
  if (!fraction.empty()) {
    const std::optional<Wide> part = fraction_bytes(fraction, shift);
    if (!part) {
      return fail("not a whole number of bytes");
    }
    bytes += *part;
  }
  if (bytes > std::numeric_limits<std::uint64_t>::max()) {
    return fail("too large");
  }
  return static_cast<std::uint64_t>(bytes);
}

} // namespace lume_unlock::util
