#include "util/atomic_file.hpp"
#include "util/download_parts.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

namespace lume_unlock::util {

/// What the connections of one parallel download share: the file, the chunks and their progress,
/// the retry budget, and how the download ends early (an error, or the server no longer
/// honouring the ranges).
class ParallelState {
public:
  ParallelState(const DownloadPlan& plan, const ChunkPlan& chunks, int fd)
      : m_plan(plan), m_layout(chunks), m_retries(plan), m_fd(fd),
        m_done(new std::atomic<std::uint64_t>[chunks.count()]) {
    for (std::size_t i = 0; i < chunks.count(); ++i) {
      m_done[i].store(chunks.done[i]);
    }
  }

  const DownloadPlan& plan() const { return m_plan; }
  const ChunkPlan& layout() const { return m_layout; }
  DownloadRetries& retries() { return m_retries; }
  int fd() const { return m_fd; }

  /// The next chunk (in file order) that nobody has taken and that is not complete.
  std::optional<std::size_t> take() {
    std::lock_guard<std::mutex> lock(m_mutex);
    while (m_next < m_layout.count() && done(m_next) == m_layout.length(m_next)) {
      ++m_next;
    }
    return m_next == m_layout.count() ? std::nullopt : std::optional<std::size_t>(m_next++);
  }
  std::uint64_t done(std::size_t chunk) const { return m_done[chunk].load(); }
  /// `bytes` more of `chunk` are in the file (written by its one connection).
  void add_done(std::size_t chunk, std::uint64_t bytes) {
    m_done[chunk].fetch_add(bytes);
    wake();
  }
  /// The chunks' progress now, for the record beside the partial and the hasher.
  ChunkPlan snapshot() const {
    ChunkPlan plan = m_layout;
    for (std::size_t i = 0; i < plan.count(); ++i) {
      plan.done[i] = done(i);
    }
    return plan;
  }

  void fail(Error error) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_error = m_error ? m_error : std::move(error);
    }
    stop();
  }
  /// The server answered something that must not be spliced into the file.
  void start_over() {
    m_start_over = true;
    stop();
  }
  bool stopping() const { return m_stop.load(); }
  /// Ends the connections at their next body bytes (the coordinator's own failure).
  void stop() {
    m_stop = true;
    wake();
  }
  std::optional<Error> error() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_error;
  }
  bool must_start_over() const { return m_start_over.load(); }

  /// Counts what connections report (bytes written, a stop).
  std::uint64_t events() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_events;
  }
  /// Waits until events() differs from `seen` (taken before the caller looked at the chunks, so
  /// nothing reported in between is missed), at most `limit`.
  void wait(std::uint64_t seen, std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_wake.wait_for(lock, limit, [&] { return m_events != seen || m_stop.load(); });
  }

  std::atomic<std::uint64_t> network_bytes{0};

private:
  void wake() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      ++m_events;
    }
    m_wake.notify_all();
  }

  const DownloadPlan& m_plan;
  ChunkPlan m_layout; ///< size, chunk_bytes, etag; its `done` is the starting point only
  DownloadRetries m_retries;
  int m_fd;
  std::unique_ptr<std::atomic<std::uint64_t>[]> m_done;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::uint64_t m_events = 0;
  std::size_t m_next = 0;
  std::optional<Error> m_error;
  std::atomic<bool> m_stop{false};
  std::atomic<bool> m_start_over{false};
};

/// Bytes a connection holds before writing them: 4 connections keep 1 MiB in all.
constexpr std::size_t k_connection_buffer = 256u << 10;

class ChunkConnection {
public:
  ChunkConnection(HttpClient& http, ParallelState& state) : m_http(http), m_state(state) {
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
    m_mismatch = false;
    m_write_error.reset();
    m_buffer.clear();
    std::optional<Error> auth_error;
    auto response = send_download(m_http, m_state.plan(), request_for(offset, last), auth_error);
    flush(); // what arrived before a drop is good: the range was checked before the first byte
    if (m_write_error || auth_error) {
      return m_write_error ? *m_write_error : *auth_error;
    }
    if (m_mismatch) {
      m_state.start_over();
      return ok_status();
    }
    if (m_state.stopping()) {
      return ok_status();
    }
    if (!response) {
      return m_state.retries().after_transport_error(response.error());
    }
    return after_status(response.value(), chunk);
  }

  HttpRequest request_for(std::uint64_t offset, std::uint64_t last) {
    HttpRequest request = download_request(m_state.plan(), offset, last, m_state.layout().etag);
    request.on_sink_start = [this, offset](const HttpResponse& head) {
      return check_answer(head, offset);
    };
    request.body_sink = [this, room = last + 1 - offset](std::string_view bytes) mutable {
      if (m_state.stopping()) {
        return false;
      }
      if (bytes.size() > room) {
        m_mismatch = true; // more than the range asked
        return false;
      }
      room -= bytes.size();
      m_state.network_bytes += bytes.size();
      m_buffer.append(bytes);
      return m_buffer.size() < k_connection_buffer || flush();
    };
    return request;
  }

  /// Before the first byte: is this the range asked (not the whole file, nor another range), of
  /// the same file (its ETag)?
  bool check_answer(const HttpResponse& head, std::uint64_t offset) {
    const ChunkPlan& layout = m_state.layout();
    const auto range = parse_content_range(head.header("Content-Range").value_or(""));
    const auto etag = strong_etag(head.header("ETag").value_or(""));
    const bool changed = etag && !layout.etag.empty() && *etag != layout.etag;
    m_mismatch = head.status != 206 || range.start != offset || range.total != layout.size ||
                 changed || (!etag && !m_state.plan().pinned);
    return !m_mismatch;
  }

  Status after_status(const HttpResponse& response, std::size_t chunk) {
    const long status = response.status;
    if (status == 206 || status == 416 || (status >= 200 && status < 300)) {
      if (status != 206) {
        // 416: the file is shorter now; a 2xx without a body: neither continues these bytes.
        m_state.start_over();
        return ok_status();
      }
      const ChunkPlan& layout = m_state.layout();
      if (m_state.done(chunk) < layout.length(chunk)) {
        return m_state.retries().retry("the transfer ended at byte " +
                                       std::to_string(layout.start(chunk) + m_state.done(chunk)) +
                                       " of " + std::to_string(layout.size));
      }
      return ok_status();
    }
    return m_state.retries().after_status(response);
  }

  /// Writes the buffer at the chunk's offset; false (and the error kept) when the disk refuses.
  bool flush() {
    const ChunkPlan& layout = m_state.layout();
    const int err =
        write_all(m_state.fd(), m_buffer, layout.start(m_chunk) + m_state.done(m_chunk));
    if (err != 0) {
      m_write_error = partial_error(m_state.plan().partial_path, "write", err);
    } else {
      m_state.add_done(m_chunk, m_buffer.size());
    }
    m_buffer.clear();
    return err == 0;
  }

  HttpClient& m_http;
  ParallelState& m_state;
  std::size_t m_chunk = 0;
  std::string m_buffer;
  bool m_mismatch = false; ///< the server answered what must not be spliced into the file
  std::optional<Error> m_write_error;
};

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto k_save_interval = std::chrono::seconds(1);

/// This thread's part: hash what the connections finished, report progress, keep the record.
class Coordinator {
public:
  Coordinator(ParallelState& state, const ProgressCallback& progress)
      : m_state(state), m_progress(progress, state.plan().label),
        m_hasher(state.plan().partial_path) {}

  /// Until every byte is written and hashed, or a connection stops the download.
  Status run() {
    const std::uint64_t size = m_state.layout().size;
    while (!m_state.stopping()) {
      const auto seen = m_state.events();
      LUME_UNLOCK_TRY_ASSIGN(bool hashed, m_hasher.step(m_state.snapshot().contiguous_prefix()));
      if (m_hasher.hashed() == size) {
        report(true);
        return ok_status();
      }
      if (!hashed) {
        m_state.wait(seen, DownloadProgress::k_interval);
      }
      report(false);
      keep_record();
    }
    return ok_status();
  }

  std::string finish_hex() { return m_hasher.finish_hex(); }

private:
  void report(bool finished) {
    m_progress.report(m_state.snapshot().done_bytes(), m_state.layout().size, finished);
  }

  /// The record beside the partial, when a chunk completed or a second passed. A failed write
  /// only costs a later run some bytes: the previous record stays whole (rename).
  void keep_record() {
    const ChunkPlan now = m_state.snapshot();
    std::size_t complete = 0;
    for (std::size_t i = 0; i < now.count(); ++i) {
      complete += now.complete(i) ? 1 : 0;
    }
    if (complete == m_complete && Clock::now() - m_last_save < k_save_interval) {
      return;
    }
    m_complete = complete;
    m_last_save = Clock::now();
    (void)save_chunk_plan(m_state.plan().partial_path, now);
  }

  ParallelState& m_state;
  DownloadProgress m_progress;
  OrderedHasher m_hasher;
  std::size_t m_complete = 0;
  Clock::time_point m_last_save = Clock::now();
};

/// The partial, exactly `size` bytes long (holes where chunks are missing), and the record and
/// validator that let a killed run resume it. The record comes first: a run killed before the
/// file is resized leaves a record whose size the file does not have, which the next run
/// discards, and never a full-size file of holes that could pass for a single stream's bytes.
Result<int> open_partial(const DownloadPlan& plan, const ChunkPlan& chunks) {
  LUME_UNLOCK_TRY(save_chunk_plan(plan.partial_path, chunks));
  if (!chunks.etag.empty()) {
    LUME_UNLOCK_TRY(write_file_atomic(validator_path(plan.partial_path), chunks.etag));
  }
  LUME_UNLOCK_TRY_ASSIGN(const int fd, open_partial_file(plan.partial_path));
  if (::ftruncate(fd, static_cast<off_t>(chunks.size)) != 0) {
    auto error = partial_error(plan.partial_path, "size", errno);
    ::close(fd);
    return error;
  }
  return fd;
}

} // namespace

Result<std::optional<DownloadOutcome>> download_parallel(HttpClient& http,
                                                         const DownloadPlan& plan,
                                                         const ChunkPlan& chunks,
                                                         const ProgressCallback& progress) {
  LUME_UNLOCK_TRY_ASSIGN(const int fd, open_partial(plan, chunks));
  ParallelState state(plan, chunks, fd);
  Coordinator coordinator(state, progress);
  std::size_t missing = 0;
  for (std::size_t i = 0; i < chunks.count(); ++i) {
    missing += chunks.complete(i) ? 0 : 1;
  }
  std::vector<std::thread> connections;
  for (std::size_t i = 0; i < std::min<std::size_t>(std::max(plan.connections, 1u), missing); ++i) {
    connections.emplace_back([&http, &state, first = i == 0 && !plan.auth.challenge] {
      if (first) {
        ChunkConnection(http, state).run();
        return;
      }
      HttpClient own(http.options());
      ChunkConnection(own, state).run();
    });
  }
  const Status coordinated = coordinator.run();
  state.stop();
  for (auto& connection : connections) {
    connection.join();
  }
  ::close(fd);
  if (!coordinated || state.error() || state.must_start_over()) {
    // Resumable next time (or, starting over, about to be discarded by the caller).
    (void)save_chunk_plan(plan.partial_path, state.snapshot());
  }
  LUME_UNLOCK_TRY(coordinated);
  if (auto error = state.error()) {
    return *error;
  }
  if (state.must_start_over()) {
    return std::optional<DownloadOutcome>();
  }
  DownloadOutcome outcome;
  outcome.sha256 = coordinator.finish_hex();
  outcome.size = chunks.size;
  outcome.network_bytes = state.network_bytes.load();
  outcome.resumed_from = chunks.done_bytes();
  return std::optional<DownloadOutcome>(outcome);
}

} // namespace lume_unlock::util
