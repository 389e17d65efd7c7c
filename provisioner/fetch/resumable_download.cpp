#include "resumable_download.hpp"

#include "fetch/chunk_plan.hpp"
#include "fetch/partial_file.hpp"
#include "fetch/resume_headers.hpp"
#include "fetch/retry_budget.hpp"
#include "util/atomic_file.hpp"

#include <unistd.h>

#include <optional>

namespace lume_unlock::fetch {

namespace {

constexpr auto k_progress_interval = std::chrono::milliseconds(250);

std::optional<std::string> header_of(const std::vector<util::HttpHeader>& headers,
                                     std::string_view name) {
  util::HttpResponse response;
  response.headers = headers;
  return response.header(name);
}

/// One download: its partial file, the attempts so far and what the server said of the file.
class Download {
public:
  Download(util::HttpClient& http, const DownloadPlan& plan, const util::ProgressCallback& progress)
      : m_http(http), m_plan(plan), m_progress(progress),
        m_budget({plan.max_retries, plan.retry_backoff, plan.max_retry_after},
                 "cannot download '" + util::redact_url(plan.url) + "'") {}

  Result<DownloadOutcome> run() {
    LUME_UNLOCK_TRY(m_file.open_and_rehash(m_plan.partial_path));
    m_outcome.resumed_from = m_file.size();
    // A missing or unreadable validator only means the partial cannot be proven current.
    auto validator = util::read_file(validator_path(m_plan.partial_path));
    m_validator = validator ? validator.value() : std::string();
    if (m_file.size() > 0 && !m_plan.pinned && m_validator.empty()) {
      // Nothing proves the server still has the file these bytes came from: never splice.
      LUME_UNLOCK_TRY(m_file.truncate());
    }
    for (;;) {
      LUME_UNLOCK_TRY_ASSIGN(bool finished, attempt());
      if (finished) {
        break;
      }
    }
    report(true);
    m_outcome.size = m_file.size();
    m_outcome.sha256 = m_file.finish_hex();
    return m_outcome;
  }

private:
  /// One request; true when the file is whole.
  Result<bool> attempt() {
    const std::uint64_t offset = m_file.size();
    m_write_error.reset();
    m_restart_from_zero = false;
    m_body_started = false;
    ++m_outcome.requests;
    auto response = m_http.send(request_at(offset));
    if (auto flushed = m_file.flush(); !flushed && !m_write_error) {
      m_write_error = flushed.error();
    }
    if (m_write_error) {
      return *m_write_error;
    }
    if (m_restart_from_zero) {
      LUME_UNLOCK_TRY(m_file.truncate());
      LUME_UNLOCK_TRY(
          m_budget.retry("the server answered a range that does not continue the file"));
      return false;
    }
    if (!response) {
      LUME_UNLOCK_TRY(m_budget.after_transport_error(response.error()));
      return false;
    }
    return after_status(response.value(), offset);
  }

  util::HttpRequest request_at(std::uint64_t offset) {
    util::HttpRequest request = download_request(m_plan);
    if (offset > 0) {
      request.headers.push_back({"Range", "bytes=" + std::to_string(offset) + "-"});
      if (!m_validator.empty()) {
        request.headers.push_back({"If-Range", m_validator});
      }
    }
    request.on_sink_start = [this, offset](long status, const auto& headers) {
      return on_body_start(status, headers, offset);
    };
    request.body_sink = [this](std::string_view chunk) {
      m_outcome.network_bytes += chunk.size();
      if (auto status = m_file.append(chunk); !status) {
        m_write_error = status.error();
        return false;
      }
      report(false);
      return true;
    };
    return request;
  }

  bool
  on_body_start(long status, const std::vector<util::HttpHeader>& headers, std::uint64_t offset) {
    m_body_started = true;
    if (status == 206) {
      const auto range = parse_content_range(header_of(headers, "Content-Range").value_or(""));
      if (range.start != offset) {
        m_restart_from_zero = true; // not the bytes that follow ours
        return false;
      }
      m_total = range.total;
      return true;
    }
    // 200 (or another 2xx): the whole body, whatever we asked for.
    if (offset > 0) {
      if (auto truncated = m_file.truncate(); !truncated) {
        m_write_error = truncated.error();
        return false;
      }
    }
    remember_validator(header_of(headers, "ETag").value_or(""));
    m_total = parse_decimal(header_of(headers, "Content-Length").value_or(""));
    return true;
  }

  /// The ETag these bytes came with, kept beside the partial for a later run's If-Range.
  void remember_validator(const std::string& etag) {
    const auto strong = strong_etag(etag);
    m_validator = strong.value_or("");
    if (strong) {
      (void)util::write_file_atomic(validator_path(m_plan.partial_path), *strong);
    } else {
      unlink(validator_path(m_plan.partial_path).c_str());
    }
  }

  Result<bool> after_status(const util::HttpResponse& response, std::uint64_t offset) {
    const long status = response.status;
    if (status == 416 && offset > 0) {
      const auto range = parse_content_range(response.header("Content-Range").value_or(""));
      if (range.total == offset) {
        m_total = offset; // the partial already holds every byte
        return true;
      }
      LUME_UNLOCK_TRY(m_file.truncate());
      LUME_UNLOCK_TRY(
          m_budget.retry("the server refused to resume at byte " + std::to_string(offset)));
      return false;
    }
    if (status == 429 || status == 503) {
      LUME_UNLOCK_TRY(m_budget.retry_after(response));
      return false;
    }
    if (status >= 500) {
      LUME_UNLOCK_TRY(m_budget.retry("HTTP " + std::to_string(status)));
      return false;
    }
    if (status < 200 || status >= 300) {
      return m_budget.refused(response, m_plan.denied_hint);
    }
    if (status == 200 && !m_body_started && offset > 0) {
      LUME_UNLOCK_TRY(m_file.truncate()); // the whole resource is empty now
    }
    if (m_total && m_file.size() != *m_total) {
      LUME_UNLOCK_TRY(m_budget.retry("the transfer ended at byte " + std::to_string(m_file.size()) +
                                     " of " + std::to_string(*m_total)));
      return false;
    }
    return true;
  }

  void report(bool finished) {
    if (!m_progress) {
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!finished && now - m_last_report < k_progress_interval) {
      return;
    }
    m_last_report = now;
    util::ProgressEvent event;
    event.step = m_plan.label;
    event.done = m_file.size();
    event.total = m_total;
    event.unit = "bytes";
    event.finished = finished;
    m_progress(event);
  }

  util::HttpClient& m_http;
  const DownloadPlan& m_plan;
  const util::ProgressCallback& m_progress;
  RetryBudget m_budget;
  PartialFile m_file;
  DownloadOutcome m_outcome;
  std::optional<std::uint64_t> m_total;
  std::string m_validator;
  std::optional<Error> m_write_error;
  bool m_restart_from_zero = false;
  bool m_body_started = false;
  std::chrono::steady_clock::time_point m_last_report =
      std::chrono::steady_clock::now() - k_progress_interval;
};

} // namespace

util::HttpRequest download_request(const DownloadPlan& plan) {
  util::HttpRequest request{"GET", plan.url};
  request.follow_redirects = true; // release assets and model hubs redirect to CDNs
  request.https_only = true;
  request.timeout = std::chrono::milliseconds(0); // big files: only the stall limit applies
  request.stall_bytes_per_second = plan.stall_bytes_per_second;
  request.stall_window = plan.stall_window;
  request.bearer_token = plan.bearer_token;
  request.sink_success_only = true;
  return request;
}

std::string validator_path(const std::string& partial_path) {
  return partial_path + ".etag";
}

Result<DownloadOutcome> download_resumable(util::HttpClient& http,
                                           const DownloadPlan& plan,
                                           const util::ProgressCallback& progress) {
  return Download(http, plan, progress).run();
}

void discard_partial(const std::string& partial_path) {
  unlink(partial_path.c_str());
  unlink(validator_path(partial_path).c_str());
  unlink(chunk_plan_path(partial_path).c_str());
}

} // namespace lume_unlock::fetch
