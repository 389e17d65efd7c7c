#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::fetch {

/// A decimal without sign or spaces that fits in 64 bits; nullopt for anything else.
std::optional<std::uint64_t> parse_decimal(std::string_view text);

/// "bytes START-END/TOTAL" (RFC 9110 §14.4); TOTAL may be "*", then total stays empty.
struct ContentRange {
  std::optional<std::uint64_t> start;
  std::optional<std::uint64_t> total;
};
ContentRange parse_content_range(std::string_view value);

/// Retry-After in its delay-seconds form (RFC 9110 §10.2.3); nullopt for the HTTP-date form or
/// anything unreadable (the caller's own backoff applies then).
std::optional<std::chrono::seconds> parse_retry_after(std::string_view value);

/// The ETag when it is strong ("\"abc\""); If-Range accepts only strong validators (RFC 9110
/// §13.1.5), so a weak one (W/"abc") or a malformed one is nullopt.
std::optional<std::string> strong_etag(std::string_view value);

} // namespace lume_unlock::fetch
