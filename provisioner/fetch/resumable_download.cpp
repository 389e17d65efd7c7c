#include "resumable_download.hpp"

#include "util/body_preview.hpp"
#include "util/sha256.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>

namespace lume_unlock::fetch {

namespace {

constexpr std::size_t k_write_buffer = 1 << 20;
constexpr auto k_progress_interval = std::chrono::milliseconds(250);

/// "bytes START-END/TOTAL" (RFC 9110 §14.4); TOTAL may be "*".
struct ContentRange {
  std::optional<std::uint64_t> start;
  std::optional<std::uint64_t> total;
};

std::optional<std::uint64_t> parse_number(std::string_view text) {
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
  range.total = parse_number(value.substr(slash + 1));
  const auto span = value.substr(0, slash);
  if (const auto dash = span.find('-'); dash != std::string_view::npos) {
    range.start = parse_number(span.substr(0, dash));
  }
  return range;
}

std::optional<std::string> header_of(const std::vector<util::HttpHeader>& headers,
                                     std::string_view name) {
  util::HttpResponse response;
  response.headers = headers;
  return response.header(name);
}

/// The open partial file and the hash of what it holds.
class PartialFile {
public:
  ~PartialFile() {
    if (m_fd >= 0) {
      close(m_fd);
    }
  }

  Status open_and_rehash(const std::string& path) {
    m_path = path;
    m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (m_fd < 0) {
      return io_error("open", errno);
    }
    std::string block(k_write_buffer, '\0');
    for (;;) {
      auto got = ::read(m_fd, block.data(), block.size());
      if (got < 0) {
        if (errno == EINTR) {
          continue;
        }
        return io_error("read", errno);
      }
      if (got == 0) {
        break;
      }
      m_hasher.update(block.data(), static_cast<std::size_t>(got));
    }
    return ok_status();
  }

  Status truncate() {
    m_buffer.clear();
    if (ftruncate(m_fd, 0) != 0 || lseek(m_fd, 0, SEEK_SET) != 0) {
      return io_error("truncate", errno);
    }
    m_hasher = util::Sha256();
    return ok_status();
  }

  /// Buffers and hashes; writes in 1 MiB blocks.
  Status append(std::string_view chunk) {
    m_hasher.update(chunk);
    m_buffer.append(chunk);
    return m_buffer.size() >= k_write_buffer ? flush() : ok_status();
  }

  Status flush() {
    std::string_view rest = m_buffer;
    while (!rest.empty()) {
      auto written = ::write(m_fd, rest.data(), rest.size());
      if (written < 0) {
        if (errno == EINTR) {
          continue;
        }
        return io_error("write", errno);
      }
      rest.remove_prefix(static_cast<std::size_t>(written));
    }
    m_buffer.clear();
    return ok_status();
  }

  std::uint64_t size() const { return m_hasher.size(); }
  std::string finish_hex() { return m_hasher.finish_hex(); }

private:
  Error io_error(const char* action, int err) const {
    return Error(ErrorCategory::failure,
                 "cannot " + std::string(action) + " the partial download '" + m_path + "'",
                 std::strerror(err));
  }

  std::string m_path;
  int m_fd = -1;
  util::Sha256 m_hasher;
  std::string m_buffer;
};

bool retryable(util::TransportError::Kind kind) {
  using Kind = util::TransportError::Kind;
  return kind == Kind::other || kind == Kind::timeout || kind == Kind::aborted ||
         kind == Kind::connection_refused;
}

} // namespace

Result<DownloadOutcome> download_resumable(util::HttpClient& http,
                                           const DownloadPlan& plan,
                                           const util::ProgressCallback& progress) {
  const std::string shown = util::redact_url(plan.url);
  const std::string what = "cannot download '" + shown + "'";
  PartialFile file;
  LUME_UNLOCK_TRY(file.open_and_rehash(plan.partial_path));

  DownloadOutcome outcome;
  outcome.resumed_from = file.size();
  std::optional<std::uint64_t> total;
  auto last_report = std::chrono::steady_clock::now() - k_progress_interval;
  auto report = [&](bool finished) {
    if (!progress) {
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!finished && now - last_report < k_progress_interval) {
      return;
    }
    last_report = now;
    util::ProgressEvent event;
    event.step = plan.label;
    event.done = file.size();
    event.total = total;
    event.unit = "bytes";
    event.finished = finished;
    progress(event);
  };

  unsigned failures = 0;
  // Retries and restarts share one bound, so a server that keeps changing its mind ends.
  auto next_attempt = [&](const std::string& why) -> std::optional<Error> {
    if (failures >= plan.max_retries) {
      return Error(ErrorCategory::registry,
                   what,
                   why + " (after " + std::to_string(failures + 1) + " attempts)",
                   "run the command again: the download resumes where it stopped");
    }
    ++failures;
    std::this_thread::sleep_for(plan.retry_backoff * failures);
    return std::nullopt;
  };

  for (;;) {
    const std::uint64_t offset = file.size();
    std::optional<Error> write_error;
    bool restart_from_zero = false;

    util::HttpRequest request{"GET", plan.url};
    request.follow_redirects = true; // release assets and model hubs redirect to CDNs
    request.https_only = true;
    request.timeout = std::chrono::milliseconds(0); // big files: only the stall limit applies
    request.sink_success_only = true;
    if (offset > 0) {
      request.headers.push_back({"Range", "bytes=" + std::to_string(offset) + "-"});
    }
    bool body_started = false;
    request.on_sink_start = [&](long status, const std::vector<util::HttpHeader>& headers) {
      body_started = true;
      if (status == 206) {
        const auto range = parse_content_range(header_of(headers, "Content-Range").value_or(""));
        if (range.start != offset) {
          restart_from_zero = true; // not the bytes that follow ours
          return false;
        }
        total = range.total;
        return true;
      }
      // 200 (or another 2xx): the whole body, whatever we asked for.
      if (offset > 0) {
        if (auto status_ = file.truncate(); !status_) {
          write_error = status_.error();
          return false;
        }
      }
      total = parse_number(header_of(headers, "Content-Length").value_or(""));
      return true;
    };
    request.body_sink = [&](std::string_view chunk) {
      outcome.network_bytes += chunk.size();
      if (auto status = file.append(chunk); !status) {
        write_error = status.error();
        return false;
      }
      report(false);
      return true;
    };

    ++outcome.requests;
    auto response = http.send(request);
    if (auto flushed = file.flush(); !flushed && !write_error) {
      write_error = flushed.error();
    }
    if (write_error) {
      return *write_error;
    }
    if (restart_from_zero) {
      LUME_UNLOCK_TRY(file.truncate());
      if (auto stop = next_attempt("the server answered a range that does not continue the file")) {
        return *stop;
      }
      continue;
    }
    if (!response) {
      const auto& error = response.error();
      if (error.kind == util::TransportError::Kind::protocol) {
        return Error(ErrorCategory::registry,
                     what,
                     "a redirect left https (" + error.detail + ")",
                     "artifacts are fetched over TLS only; ask for an https:// download link");
      }
      if (!retryable(error.kind)) {
        return Error(ErrorCategory::registry, what, error.detail);
      }
      if (auto stop = next_attempt(error.detail)) {
        return *stop;
      }
      continue;
    }
    const long status = response.value().status;
    if (status == 416 && offset > 0) {
      const auto range = parse_content_range(response.value().header("Content-Range").value_or(""));
      if (range.total == offset) {
        total = offset; // the partial already holds every byte
        break;
      }
      LUME_UNLOCK_TRY(file.truncate());
      if (auto stop =
              next_attempt("the server refused to resume at byte " + std::to_string(offset))) {
        return *stop;
      }
      continue;
    }
    if (status >= 500) {
      if (auto stop = next_attempt("HTTP " + std::to_string(status))) {
        return *stop;
      }
      continue;
    }
    if (status < 200 || status >= 300) {
      std::string why = "HTTP " + std::to_string(status);
      if (!response.value().body.empty()) {
        why += ": " + util::body_preview(response.value().body);
      }
      return Error(ErrorCategory::registry, what, why);
    }
    if (status == 200 && !body_started && offset > 0) {
      LUME_UNLOCK_TRY(file.truncate()); // the whole resource is empty now
    }
    if (total && file.size() != *total) {
      if (auto stop = next_attempt("the transfer ended at byte " + std::to_string(file.size()) +
                                   " of " + std::to_string(*total))) {
        return *stop;
      }
      continue;
    }
    break;
  }
  report(true);
  outcome.size = file.size();
  outcome.sha256 = file.finish_hex();
  return outcome;
}

} // namespace lume_unlock::fetch
