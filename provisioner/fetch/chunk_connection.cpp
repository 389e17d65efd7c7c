#include "fetch/chunk_connection.hpp"

#include "fetch/resume_headers.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lume_unlock::fetch {

namespace {

/// Bytes a connection holds before writing them: 4 connections keep 1 MiB in all.
constexpr std::size_t k_connection_buffer = 256u << 10;

class ChunkConnection {
public:
  ChunkConnection(util::HttpClient& http, ParallelState& state) : m_http(http), m_state(state) {
    m_buffer.reserve(k_connection_buffer);
  }

  void run() {
    while (!m_state.stopping()) {
      const auto chunk = m_state.take();
      if (!chunk) {
        return;
      }
      if (auto status = fetch(*chunk); !status) {
        m_state.fail(status.error());
        return;
      }
    }
  }

private:
  Status fetch(std::size_t chunk) {
    const ChunkPlan& layout = m_state.layout();
    while (!m_state.stopping() && m_state.done(chunk) < layout.length(chunk)) {
      LUME_UNLOCK_TRY(attempt(chunk));
    }
    return ok_status();
  }

  /// One request for what is missing of `chunk`.
  Status attempt(std::size_t chunk) {
    const ChunkPlan& layout = m_state.layout();
    const std::uint64_t offset = layout.start(chunk) + m_state.done(chunk);
    const std::uint64_t last = layout.start(chunk) + layout.length(chunk) - 1;
    m_chunk = chunk;
    m_mismatch.clear();
    m_write_error.reset();
    m_buffer.clear();
    ++m_state.requests;
    auto response = m_http.send(request_for(offset, last));
    flush(); // what arrived before a drop is good: the range was checked before the first byte
    if (m_write_error) {
      return *m_write_error;
    }
    if (!m_mismatch.empty()) {
      m_state.start_over(m_mismatch);
      return ok_status();
    }
    if (m_state.stopping()) {
      return ok_status();
    }
    if (!response) {
      return m_state.budget().after_transport_error(response.error());
    }
    return after_status(response.value(), chunk);
  }

  util::HttpRequest request_for(std::uint64_t offset, std::uint64_t last) {
    util::HttpRequest request = download_request(m_state.plan());
    request.headers.push_back(
        {"Range", "bytes=" + std::to_string(offset) + "-" + std::to_string(last)});
    if (!m_state.layout().etag.empty()) {
      request.headers.push_back({"If-Range", m_state.layout().etag});
    }
    request.on_sink_start = [this, offset](long status, const auto& headers) {
      return check_answer(status, headers, offset);
    };
    request.body_sink = [this, room = last + 1 - offset](std::string_view bytes) mutable {
      if (m_state.stopping()) {
        return false;
      }
      if (bytes.size() > room) {
        m_mismatch = "the server sent more than the range asked";
        return false;
      }
      room -= bytes.size();
      m_state.network_bytes += bytes.size();
      m_buffer.append(bytes);
      return m_buffer.size() < k_connection_buffer || flush();
    };
    return request;
  }

  /// Before the first byte: is this the range asked, of the same file?
  bool
  check_answer(long status, const std::vector<util::HttpHeader>& headers, std::uint64_t offset) {
    util::HttpResponse answer;
    answer.headers = headers;
    const ChunkPlan& layout = m_state.layout();
    if (status != 206) {
      m_mismatch =
          "the server answered a range with the whole file (HTTP " + std::to_string(status) + ")";
      return false;
    }
    const auto range = parse_content_range(answer.header("Content-Range").value_or(""));
    if (range.start != offset || range.total != layout.size) {
      m_mismatch = "the server answered another range than bytes=" + std::to_string(offset) + "-";
      return false;
    }
    const auto etag = strong_etag(answer.header("ETag").value_or(""));
    const bool changed = etag && !layout.etag.empty() && *etag != layout.etag;
    if (changed || (!etag && !m_state.plan().pinned)) {
      m_mismatch = "the file changed on the server (ETag " + layout.etag + ", now " +
                   etag.value_or("none") + ")";
      return false;
    }
    return true;
  }

  Status after_status(const util::HttpResponse& response, std::size_t chunk) {
    const long status = response.status;
    if (status == 429 || status == 503) {
      return m_state.budget().retry_after(response);
    }
    if (status >= 500) {
      return m_state.budget().retry("HTTP " + std::to_string(status));
    }
    if (status == 206 || status == 416 || (status >= 200 && status < 300)) {
      if (status != 206) {
        // 416: the file is shorter now; a 2xx without a body: neither continues these bytes.
        m_state.start_over("the server answered a range with HTTP " + std::to_string(status));
        return ok_status();
      }
      const ChunkPlan& layout = m_state.layout();
      if (m_state.done(chunk) < layout.length(chunk)) {
        return m_state.budget().retry("the transfer ended at byte " +
                                      std::to_string(layout.start(chunk) + m_state.done(chunk)) +
                                      " of " + std::to_string(layout.size));
      }
      return ok_status();
    }
    return m_state.budget().refused(response, m_state.plan().denied_hint);
  }

  /// Writes the buffer at the chunk's offset; false (and the error kept) when the disk refuses.
  bool flush() {
    const ChunkPlan& layout = m_state.layout();
    std::string_view rest = m_buffer;
    while (!rest.empty()) {
      const auto at = layout.start(m_chunk) + m_state.done(m_chunk);
      const auto written = ::pwrite(m_state.fd(), rest.data(), rest.size(), static_cast<off_t>(at));
      if (written < 0 && errno == EINTR) {
        continue;
      }
      if (written <= 0) {
        m_write_error =
            Error(ErrorCategory::failure,
                  "cannot write the partial download '" + m_state.plan().partial_path + "'",
                  std::strerror(errno));
        m_buffer.clear();
        return false;
      }
      m_state.add_done(m_chunk, static_cast<std::uint64_t>(written));
      rest.remove_prefix(static_cast<std::size_t>(written));
    }
    m_buffer.clear();
    return true;
  }

  util::HttpClient& m_http;
  ParallelState& m_state;
  std::size_t m_chunk = 0;
  std::string m_buffer;
  std::string m_mismatch;
  std::optional<Error> m_write_error;
};

} // namespace

ParallelState::ParallelState(const DownloadPlan& plan, const ChunkPlan& chunks, int fd)
    : m_plan(plan), m_layout(chunks),
      m_budget({plan.max_retries, plan.retry_backoff, plan.max_retry_after},
               "cannot download '" + util::redact_url(plan.url) + "'"),
      m_fd(fd), m_done(new std::atomic<std::uint64_t>[chunks.count()]) {
  for (std::size_t i = 0; i < chunks.count(); ++i) {
    m_done[i].store(chunks.done[i]);
  }
}

std::optional<std::size_t> ParallelState::take() {
  std::lock_guard<std::mutex> lock(m_mutex);
  while (m_next < m_layout.count() && done(m_next) == m_layout.length(m_next)) {
    ++m_next;
  }
  if (m_next == m_layout.count()) {
    return std::nullopt;
  }
  return m_next++;
}

void ParallelState::add_done(std::size_t chunk, std::uint64_t bytes) {
  m_done[chunk].fetch_add(bytes);
  wake();
}

ChunkPlan ParallelState::snapshot() const {
  ChunkPlan plan = m_layout;
  for (std::size_t i = 0; i < plan.count(); ++i) {
    plan.done[i] = done(i);
  }
  return plan;
}

std::uint64_t ParallelState::contiguous_prefix() const {
  std::uint64_t prefix = 0;
  for (std::size_t i = 0; i < m_layout.count(); ++i) {
    const auto bytes = done(i);
    prefix += bytes;
    if (bytes < m_layout.length(i)) {
      break;
    }
  }
  return prefix;
}

void ParallelState::fail(Error error) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_error) {
      m_error = std::move(error);
    }
  }
  stop();
}

void ParallelState::start_over(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_start_over_reason.empty()) {
      m_start_over_reason = why;
    }
  }
  m_start_over = true;
  stop();
}

std::string ParallelState::start_over_reason() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_start_over_reason;
}

void ParallelState::stop() {
  m_stop = true;
  wake();
}

std::optional<Error> ParallelState::error() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_error;
}

std::uint64_t ParallelState::events() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_events;
}

void ParallelState::wait(std::uint64_t seen, std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(m_mutex);
  m_wake.wait_for(lock, limit, [&] { return m_events != seen || m_stop.load(); });
}

void run_chunk_connection(util::HttpClient& http, ParallelState& state) {
  ChunkConnection(http, state).run();
}

void ParallelState::wake() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_events;
  }
  m_wake.notify_all();
}

} // namespace lume_unlock::fetch
