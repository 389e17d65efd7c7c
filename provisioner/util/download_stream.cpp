#include "util/atomic_file.hpp"
#include "util/download_parts.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

namespace lume_unlock::util {

BufferRelay::BufferRelay(std::size_t count, std::size_t capacity)
    : m_count(count), m_capacity(capacity) {}

BufferRelay::Buffer* BufferRelay::acquire() {
  std::unique_lock<std::mutex> lock(m_mutex);
  // Buffers are allocated only when the producer runs ahead, so a small blob costs one.
  m_changed.wait(lock, [&] { return m_cancelled || !m_free.empty() || m_all.size() < m_count; });
  if (m_cancelled) {
    return nullptr;
  }
  Buffer* buffer = nullptr;
  if (!m_free.empty()) {
    buffer = m_free.back();
    m_free.pop_back();
  } else {
    m_all.push_back(std::make_unique<Buffer>());
    buffer = m_all.back().get();
    buffer->data = std::make_unique<char[]>(m_capacity);
  }
  buffer->size = 0;
  return buffer;
}

void BufferRelay::publish(Buffer* buffer) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_published.push_back(buffer);
  }
  m_changed.notify_all();
}

void BufferRelay::close() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_closed = true;
  }
  m_changed.notify_all();
}

BufferRelay::Buffer* BufferRelay::take() {
  std::unique_lock<std::mutex> lock(m_mutex);
  m_changed.wait(lock, [&] { return m_cancelled || m_closed || !m_published.empty(); });
  if (m_cancelled || m_published.empty()) {
    return nullptr;
  }
  Buffer* buffer = m_published.front();
  m_published.pop_front();
  return buffer;
}

void BufferRelay::release(Buffer* buffer) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_free.push_back(buffer);
  }
  m_changed.notify_all();
}

void BufferRelay::cancel() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_cancelled = true;
  }
  m_changed.notify_all();
}

namespace {

/// The file a download grows, open for appending, with the SHA-256 of every byte it holds (an
/// existing file is re-hashed when opened). Appended bytes are hashed and written on a second
/// thread through a bounded relay (4 × 256 KiB), so libcurl's thread, which also decrypts TLS,
/// only copies them: registry_transfer_bench measured it faster than hashing and writing there.
class PartialFile {
public:
  PartialFile() = default;
  ~PartialFile() {
    if (m_relay) {
      m_relay->cancel();
      m_writer.join();
    }
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
    m_size = m_hasher.size();
    return ok_status();
  }

  /// Empties the file and the hash.
  Status truncate() {
    LUME_UNLOCK_TRY(flush());
    if (ftruncate(m_fd, 0) != 0 || lseek(m_fd, 0, SEEK_SET) != 0) {
      return partial_error(m_path, "truncate", errno);
    }
    m_hasher = Sha256();
    m_size = 0;
    return ok_status();
  }

  /// Copies `chunk` to the writer thread (started on the first byte after a flush).
  Status append(std::string_view chunk) {
    if (!m_relay) {
      m_relay = std::make_unique<BufferRelay>(4, 256u << 10);
      m_writer = std::thread([this] { write_relayed(); });
    }
    m_size += chunk.size();
    while (!chunk.empty()) {
      if (m_filling == nullptr && (m_filling = m_relay->acquire()) == nullptr) {
        return flush(); // the writer stopped on an error
      }
      const std::size_t n = std::min(chunk.size(), m_relay->capacity() - m_filling->size);
      std::memcpy(m_filling->data.get() + m_filling->size, chunk.data(), n);
      m_filling->size += n;
      chunk.remove_prefix(n);
      if (m_filling->size == m_relay->capacity()) {
        m_relay->publish(std::exchange(m_filling, nullptr));
      }
    }
    return ok_status();
  }

  /// Waits until every appended byte is hashed and written; the writer's error, if any.
  Status flush() {
    if (!m_relay) {
      return ok_status();
    }
    if (m_filling != nullptr) {
      m_relay->publish(std::exchange(m_filling, nullptr));
    }
    m_relay->close();
    m_writer.join();
    m_relay.reset();
    if (auto error = std::exchange(m_error, std::nullopt)) {
      return *error;
    }
    return ok_status();
  }

  std::uint64_t size() const { return m_size; }
  std::string finish_hex() { return m_hasher.finish_hex(); }

private:
  void write_relayed() {
    while (BufferRelay::Buffer* buffer = m_relay->take()) {
      std::string_view rest(buffer->data.get(), buffer->size);
      m_hasher.update(rest);
      if (const int err = write_all(m_fd, rest)) {
        m_error = partial_error(m_path, "write", err);
        m_relay->cancel();
        return;
      }
      m_relay->release(buffer);
    }
  }

  std::string m_path;
  int m_fd = -1;
  Sha256 m_hasher; ///< the writer thread's while it runs
  std::uint64_t m_size = 0;
  std::unique_ptr<BufferRelay> m_relay;
  BufferRelay::Buffer* m_filling = nullptr;
  std::optional<Error> m_error; ///< set by the writer before it stops
  std::thread m_writer;
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
    std::optional<Error> auth_error;
    auto response = send_download(m_http, m_plan, request_at(offset), auth_error);
    if (auto flushed = m_file.flush(); !flushed && !m_write_error) {
      m_write_error = flushed.error();
    }
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
