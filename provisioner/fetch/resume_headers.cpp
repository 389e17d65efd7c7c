#include "fetch/resume_headers.hpp"

namespace lume_unlock::fetch {

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

ContentRange parse_content_range(std::string_view value) {
  ContentRange range;
  constexpr std::string_view k_unit = "bytes ";
  if (value.substr(0, k_unit.size()) != k_unit) {
    return range;
  }
  value.remove_prefix(k_unit.size());
  const auto slash = value.find('/');
  if (slash == std::string_view::npos) {
    return range;
  }
  range.total = parse_decimal(value.substr(slash + 1));
  const auto span = value.substr(0, slash);
  if (const auto dash = span.find('-'); dash != std::string_view::npos) {
    range.start = parse_decimal(span.substr(0, dash));
  }
  return range;
}

std::optional<std::chrono::seconds> parse_retry_after(std::string_view value) {
  while (!value.empty() && value.front() == ' ') {
    value.remove_prefix(1);
  }
  while (!value.empty() && value.back() == ' ') {
    value.remove_suffix(1);
  }
  const auto seconds = parse_decimal(value);
  if (!seconds || *seconds > 86400u * 365u) {
    return std::nullopt;
  }
  return std::chrono::seconds(static_cast<std::chrono::seconds::rep>(*seconds));
}

std::optional<std::string> strong_etag(std::string_view value) {
  if (value.size() < 2 || value.front() != '"' || value.back() != '"') {
    return std::nullopt;
  }
  for (char c : value.substr(1, value.size() - 2)) {
    // etagc (RFC 9110 §8.8.3): visible characters but the quote, and obs-text.
    if (c == '"' || static_cast<unsigned char>(c) < 0x21 || c == 0x7f) {
      return std::nullopt;
    }
  }
  return std::string(value);
}

} // namespace lume_unlock::fetch
