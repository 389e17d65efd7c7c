#pragma once

#include "util/http_client.hpp"

#include <chrono>
#include <mutex>
#include <optional>
#include <string_view>

namespace lume_unlock::util {

/// How often and how long one operation retries a failed request; the registry, Lume and
/// downloads use it (docs/sources.md "Retry-After and RateLimit").
struct RetryPolicy {
  unsigned max_retries = 3;
  /// Before retry n: backoff × 2^(n−1), at most max_backoff.
  std::chrono::milliseconds backoff{200};
  std::chrono::milliseconds max_backoff{10000};
  /// The longest wait a server may ask for (Retry-After, RateLimit); a longer one ends the retries.
  std::chrono::seconds max_server_wait{120};

  std::chrono::milliseconds backoff_before(unsigned retry) const;
};

/// Retry-After (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date (IMF-fixdate) measured from
/// `now`, a past date being 0. nullopt for anything else.
std::optional<std::chrono::seconds> parse_retry_after(std::string_view value,
                                                      std::chrono::system_clock::time_point now);

/// The reset ("t") of the first exhausted ("r=0") item of a RateLimit field (IETF
/// draft-ietf-httpapi-ratelimit-headers-09 §4: `"api";r=0;t=55`). nullopt when no item is.
std::optional<std::chrono::seconds> parse_ratelimit_reset(std::string_view value);

/// What a throttled answer asks to wait: Retry-After, which takes precedence (draft §7), else
/// the RateLimit reset.
std::optional<std::chrono::seconds>
server_wait(const HttpResponse& response,
            std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

/// Statuses a retry may change: 408, 429 and 5xx.
bool retryable_status(long status);
/// Transport failures a retry may change (a drop, a stall, a timeout, a refused connection).
bool retryable_transport(TransportError::Kind kind);

/// The retries of one operation, shared by its threads (a parallel download's connections).
class Retries {
public:
  explicit Retries(RetryPolicy policy) : m_policy(policy) {}

  enum class Verdict { retry, spent, wait_too_long };
  struct Next {
    Verdict verdict = Verdict::spent;
    std::chrono::milliseconds wait{0};
    std::optional<std::chrono::seconds> asked; ///< what the server asked for, if anything
    unsigned attempts = 0;                     ///< requests sent so far
  };

  /// Spends one retry and sleeps before it: the server's wait when `response` names one, else
  /// the backoff. No sleep when the verdict is not retry.
  Next next(const HttpResponse* response = nullptr);
  const RetryPolicy& policy() const { return m_policy; }

private:
  RetryPolicy m_policy;
  std::mutex m_mutex;
  unsigned m_spent = 0;
};

} // namespace lume_unlock::util
