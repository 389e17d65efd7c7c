#include "util/atomic_file.hpp"
#include "util/download_parts.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lume_unlock::util {

namespace {

/// The file a download grows, open for appending, with the SHA-256 of every byte it holds (an
/// existing file is re-hashed when opened). Appended bytes are hashed and written on libcurl's
/// thread: registry_transfer_bench showed no median loss against a second thread for it.
class PartialFile {
public:
  PartialFile() = default;
  ~PartialFile() {
    if (m_fd >= 0) {
      close(m_fd);
    }
  }
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;

  /// Opens (creating when missing, never following a link) and hashes what is there.
  Status open_and_rehash(const std::string& path) {
    m_path = path;
    LUME_UNLOCK_TRY_ASSIGN(m_fd, open_partial_file(path));
    const off_t end = ::lseek(m_fd, 0, SEEK_END); // where appending goes on
    if (end < 0) {
      return partial_error(m_path, "read", errno);
    }
    OrderedHasher existing(path);
    LUME_UNLOCK_TRY(existing.catch_up(static_cast<std::uint64_t>(end)));
    m_hasher = existing.release();
    return ok_status();
  }

  /// Empties the file and the hash.
  Status truncate() {
    if (ftruncate(m_fd, 0) != 0 || lseek(m_fd, 0, SEEK_SET) != 0) {
      return partial_error(m_path, "truncate", errno);
    }
    m_hasher = Sha256();
    return ok_status();
  }

  Status append(std::string_view bytes) {
    m_hasher.update(bytes);
    if (const int err = write_all(m_fd, bytes)) {
      return partial_error(m_path, "write", err);
    }
    return ok_status();
  }

  std::uint64_t size() const { return m_hasher.size(); }
  std::string finish_hex() { return m_hasher.finish_hex(); }

private:
  std::string m_path;
  int m_fd = -1;
  Sha256 m_hasher;
};

/// One download: its partial file, the attempts so far and what the server said of the file.
class Download {
public:
  Download(HttpClient& http, const DownloadPlan& plan, const ProgressCallback& progress)
      : m_http(http), m_plan(plan), m_progress(progress, plan.label), m_retries(plan) {}

  Result<DownloadOutcome> run() {
    LUME_UNLOCK_TRY(m_file.open_and_rehash(m_plan.partial_path));
    m_outcome.resumed_from = m_file.size();
    m_validator = read_validator(m_plan.partial_path);
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
    m_progress.report(m_file.size(), m_total, true);
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
    std::optional<Error> auth_error;
    auto response = send_download(m_http, m_plan, request_at(offset), auth_error);
    if (m_write_error || auth_error) {
      return m_write_error ? *m_write_error : *auth_error;
    }
    if (m_too_large) {
      discard_partial(m_plan.partial_path); // not the file expected: nothing of it is kept
      return Error(ErrorCategory::registry,
                   m_retries.what(),
                   "the server sent more than the " + std::to_string(*m_plan.size) +
                       " bytes expected");
    }
    if (m_restart_from_zero) {
      LUME_UNLOCK_TRY(m_file.truncate());
      LUME_UNLOCK_TRY(
          m_retries.retry("the server answered a range that does not continue the file"));
      return false;
    }
    if (!response) {
      LUME_UNLOCK_TRY(m_retries.after_transport_error(response.error()));
      return false;
    }
    return after_status(response.value(), offset);
  }

  HttpRequest request_at(std::uint64_t offset) {
    HttpRequest request = download_request(m_plan, offset, std::nullopt, m_validator);
    request.on_sink_start = [this, offset](const HttpResponse& head) {
      return on_body_start(head, offset);
    };
    request.body_sink = [this](std::string_view chunk) {
      m_outcome.network_bytes += chunk.size();
      if (m_plan.size && m_file.size() + chunk.size() > *m_plan.size) {
        m_too_large = true;
        return false;
      }
      if (auto status = m_file.append(chunk); !status) {
        m_write_error = status.error();
        return false;
      }
      m_progress.report(m_file.size(), m_total, false);
      return true;
    };
    return request;
  }

  bool on_body_start(const HttpResponse& head, std::uint64_t offset) {
    m_body_started = true;
    if (head.status == 206) {
      const auto range = parse_content_range(head.header("Content-Range").value_or(""));
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
    remember_validator(head.header("ETag").value_or(""));
    m_total = parse_decimal(head.header("Content-Length").value_or(""));
    return true;
  }

  /// The ETag these bytes came with, kept beside the partial for a later run's If-Range.
  void remember_validator(const std::string& etag) {
    const auto strong = strong_etag(etag);
    m_validator = strong.value_or("");
    if (strong) {
      (void)write_file_atomic(validator_path(m_plan.partial_path), *strong);
    } else {
      unlink(validator_path(m_plan.partial_path).c_str());
    }
  }

  Result<bool> after_status(const HttpResponse& response, std::uint64_t offset) {
    const long status = response.status;
    if (status == 416 && offset > 0) {
      const auto range = parse_content_range(response.header("Content-Range").value_or(""));
      if (range.total == offset) {
        m_total = offset; // the partial already holds every byte
        return true;
      }
      LUME_UNLOCK_TRY(m_file.truncate());
      LUME_UNLOCK_TRY(
          m_retries.retry("the server refused to resume at byte " + std::to_string(offset)));
      return false;
    }
    if (status < 200 || status >= 300) {
      LUME_UNLOCK_TRY(m_retries.after_status(response));
      return false;
    }
    if (status == 200 && !m_body_started && offset > 0) {
      LUME_UNLOCK_TRY(m_file.truncate()); // the whole resource is empty now
    }
    if (m_total && m_file.size() != *m_total) {
      LUME_UNLOCK_TRY(m_retries.retry("the transfer ended at byte " +
                                      std::to_string(m_file.size()) + " of " +
                                      std::to_string(*m_total)));
      return false;
    }
    return true;
  }

  HttpClient& m_http;
  const DownloadPlan& m_plan;
  DownloadProgress m_progress;
  DownloadRetries m_retries;
  PartialFile m_file;
  DownloadOutcome m_outcome;
  std::optional<std::uint64_t> m_total;
  std::string m_validator;
  std::optional<Error> m_write_error;
  bool m_restart_from_zero = false;
  bool m_body_started = false;
  bool m_too_large = false;
};

} // namespace

Result<DownloadOutcome>
download_resumable(HttpClient& http, const DownloadPlan& plan, const ProgressCallback& progress) {
  return Download(http, plan, progress).run();
}

} // namespace lume_unlock::util
