#include "fetch/retry_budget.hpp"

#include "fetch/resume_headers.hpp"
#include "util/text_check.hpp"

#include <thread>

namespace lume_unlock::fetch {

namespace {

bool retryable(util::TransportError::Kind kind) {
  using Kind = util::TransportError::Kind;
  return kind == Kind::other || kind == Kind::timeout || kind == Kind::stalled ||
         kind == Kind::aborted || kind == Kind::connection_refused;
}

} // namespace

Status RetryBudget::retry(const std::string& why, std::optional<std::chrono::seconds> wait) {
  unsigned failures = 0;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_failures >= m_limits.max_retries) {
      return Error(ErrorCategory::registry,
                   m_what,
                   why + " (after " + std::to_string(m_failures + 1) + " attempts)",
                   "run the command again: the download resumes where it stopped");
    }
    failures = ++m_failures;
  }
  if (wait) {
    std::this_thread::sleep_for(*wait);
  } else {
    std::this_thread::sleep_for(m_limits.backoff * failures);
  }
  return ok_status();
}

Status RetryBudget::retry_after(const util::HttpResponse& response) {
  const std::string why = "HTTP " + std::to_string(response.status);
  const auto asked = parse_retry_after(response.header("Retry-After").value_or(""));
  if (asked && *asked > m_limits.max_retry_after) {
    return Error(ErrorCategory::registry,
                 m_what,
                 why + ": the server asks to wait " + std::to_string(asked->count()) +
                     " s (Retry-After), longer than the " +
                     std::to_string(m_limits.max_retry_after.count()) + " s lume-unlock waits",
                 "run the command again later: the download resumes where it stopped");
  }
  return retry(why + (asked ? " (Retry-After " + std::to_string(asked->count()) + " s)" : ""),
               asked);
}

Status RetryBudget::after_transport_error(const util::TransportError& error) {
  if (error.kind == util::TransportError::Kind::protocol) {
    return Error(ErrorCategory::registry,
                 m_what,
                 "a redirect left https (" + error.detail + ")",
                 "artifacts are fetched over TLS only; ask for an https:// download link");
  }
  if (!retryable(error.kind)) {
    return Error(ErrorCategory::registry, m_what, error.detail);
  }
  return retry(error.detail);
}

Error RetryBudget::refused(const util::HttpResponse& response,
                           const std::string& denied_hint) const {
  std::string why = "HTTP " + std::to_string(response.status);
  if (!response.body.empty()) {
    why += ": " + util::body_preview(response.body);
  }
  const bool denied = response.status == 401 || response.status == 403;
  if (denied && !denied_hint.empty()) {
    return Error(ErrorCategory::registry, m_what, why, denied_hint);
  }
  return Error(ErrorCategory::registry, m_what, why);
}

} // namespace lume_unlock::fetch
