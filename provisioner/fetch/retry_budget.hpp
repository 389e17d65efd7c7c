#pragma once

#include "util/http_client.hpp"
#include "util/result.hpp"

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

namespace lume_unlock::fetch {

/// The retries one download may spend, shared by all its connections ("3 retries in all per
/// item", README "Downloads"), and the words of the failures that end it. Thread-safe: the
/// connections of a parallel download draw on one budget, so a server that keeps failing ends
/// the download as soon as a single stream would.
class RetryBudget {
public:
  struct Limits {
    unsigned max_retries = 3;
    std::chrono::milliseconds backoff{200}; ///< retry n waits n times this
    std::chrono::seconds max_retry_after{120};
  };
  /// `what` opens every error ("cannot download 'URL'").
  RetryBudget(Limits limits, std::string what) : m_limits(limits), m_what(std::move(what)) {}

  /// Spends one retry and waits (`wait`, or the backoff); fails naming `why` and the attempts
  /// when none is left.
  Status retry(const std::string& why, std::optional<std::chrono::seconds> wait = std::nullopt);
  /// 429 and 503: retry after the server's Retry-After, or fail at once when it asks for longer
  /// than max_retry_after.
  Status retry_after(const util::HttpResponse& response);
  /// A dropped or stalled connection is retried; a redirect off https and other transport
  /// failures are not.
  Status after_transport_error(const util::TransportError& error);
  /// A status that no retry changes (401, 403, 404…), with the body's preview; `denied_hint`
  /// (when set) is the hint of a 401 or 403.
  Error refused(const util::HttpResponse& response, const std::string& denied_hint) const;

  const std::string& what() const { return m_what; }

private:
  Limits m_limits;
  std::string m_what;
  std::mutex m_mutex;
  unsigned m_failures = 0;
};

} // namespace lume_unlock::fetch
