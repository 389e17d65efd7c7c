#include "util/retry_policy.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <thread>

namespace lume_unlock::util {

namespace {

/// Up to a year of seconds, digits only.
std::optional<std::chrono::seconds> seconds_of(std::string_view text) {
  const auto value = parse_decimal(text);
  if (!value || *value > 86400u * 365) {
    return std::nullopt;
  }
  return std::chrono::seconds(*value);
}

/// IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 §5.6.7).
std::optional<std::chrono::system_clock::time_point> http_date(std::string_view text) {
  static const char* const k_months[] = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char weekday[4] = {}, month[4] = {}, zone[4] = {};
  std::tm tm{};
  int consumed = 0;
  const std::string copy(text);
  if (std::sscanf(copy.c_str(),
                  "%3s, %2d %3s %4d %2d:%2d:%2d %3s%n",
                  weekday,
                  &tm.tm_mday,
                  month,
                  &tm.tm_year,
                  &tm.tm_hour,
                  &tm.tm_min,
                  &tm.tm_sec,
                  zone,
                  &consumed) != 8 ||
      static_cast<std::size_t>(consumed) != copy.size() || std::strcmp(zone, "GMT") != 0 ||
      weekday[3] != '\0' || copy[3] != ',') {
    return std::nullopt;
  }
  const auto found = std::find_if(std::begin(k_months), std::end(k_months), [&](const char* m) {
    return std::strcmp(m, month) == 0;
  });
  if (found == std::end(k_months)) {
    return std::nullopt;
  }
  tm.tm_mon = static_cast<int>(found - std::begin(k_months));
  tm.tm_year -= 1900;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

} // namespace

std::chrono::milliseconds RetryPolicy::backoff_before(unsigned retry) const {
  auto wait = backoff;
  for (unsigned i = 1; i < retry && wait < max_backoff; ++i) {
    wait *= 2;
  }
  return std::min(wait, max_backoff);
}

std::optional<std::chrono::seconds> parse_retry_after(std::string_view text,
                                                      std::chrono::system_clock::time_point now) {
  const std::string value = trim(text, " \t");
  if (auto seconds = seconds_of(value)) {
    return seconds;
  }
  const auto date = http_date(value);
  if (!date) {
    return std::nullopt;
  }
  const auto ahead = std::chrono::ceil<std::chrono::seconds>(*date - now);
  return std::max(ahead, std::chrono::seconds(0));
}

std::optional<std::chrono::seconds> parse_ratelimit_reset(std::string_view value) {
  // A List of Items, each a policy name with ";key=value" parameters (RFC 8941 §3.1).
  while (!value.empty()) {
    const auto comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    std::optional<std::chrono::seconds> remaining, reset;
    for (auto semicolon = item.find(';'); semicolon != std::string_view::npos;
         semicolon = item.find(';')) {
      item.remove_prefix(semicolon + 1);
      const std::string parameter = trim(item.substr(0, item.find(';')), " \t");
      const auto equals = parameter.find('=');
      const std::string key = trim(parameter.substr(0, equals), " \t");
      const auto number = equals == std::string_view::npos
                              ? std::nullopt
                              : seconds_of(trim(parameter.substr(equals + 1), " \t"));
      if (key == "r") {
        remaining = number;
      } else if (key == "t") {
        reset = number;
      }
    }
    if (remaining && remaining->count() == 0 && reset) {
      return reset;
    }
  }
  return std::nullopt;
}

std::optional<std::chrono::seconds> server_wait(const HttpResponse& response,
                                                std::chrono::system_clock::time_point now) {
  if (auto retry_after = response.header("Retry-After")) {
    if (auto wait = parse_retry_after(*retry_after, now)) {
      return wait;
    }
  }
  if (auto ratelimit = response.header("RateLimit")) {
    return parse_ratelimit_reset(*ratelimit);
  }
  return std::nullopt;
}

bool retryable_status(long status) {
  return status == 408 || status == 429 || (status >= 500 && status < 600);
}

bool retryable_transport(TransportError::Kind kind) {
  using Kind = TransportError::Kind;
  return kind == Kind::other || kind == Kind::timeout || kind == Kind::stalled ||
         kind == Kind::connection_refused;
}

Retries::Next Retries::next(const HttpResponse* response) {
  Next next;
  if (response != nullptr) {
    next.asked = server_wait(*response);
  }
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    next.attempts = m_spent + 1;
    if (m_spent >= m_policy.max_retries) {
      return next;
    }
    if (next.asked && *next.asked > m_policy.max_server_wait) {
      next.verdict = Verdict::wait_too_long;
      return next;
    }
    next.verdict = Verdict::retry;
    ++m_spent;
    next.wait =
        next.asked ? std::chrono::milliseconds(*next.asked) : m_policy.backoff_before(m_spent);
  }
  std::this_thread::sleep_for(next.wait);
  return next;
}

} // namespace lume_unlock::util
