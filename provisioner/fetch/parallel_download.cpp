#include "fetch/parallel_download.hpp"

#include "fetch/chunk_connection.hpp"
#include "fetch/ordered_hasher.hpp"
#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

namespace lume_unlock::fetch {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto k_progress_interval = std::chrono::milliseconds(250);
constexpr auto k_save_interval = std::chrono::seconds(1);

/// This thread's part: hash what the connections finished, report progress, keep the record.
class Coordinator {
public:
  Coordinator(ParallelState& state, const util::ProgressCallback& progress)
      : m_state(state), m_progress(progress), m_hasher(state.plan().partial_path) {}

  /// Until every byte is written and hashed, or a connection stops the download.
  Status run() {
    const std::uint64_t size = m_state.layout().size;
    while (!m_state.stopping()) {
      const auto seen = m_state.events();
      LUME_UNLOCK_TRY_ASSIGN(bool hashed, m_hasher.step(m_state.contiguous_prefix()));
      if (m_hasher.hashed() == size) {
        report(true);
        return ok_status();
      }
      if (!hashed) {
        m_state.wait(seen, k_progress_interval);
      }
      report(false);
      keep_record();
    }
    return ok_status();
  }

  std::string finish_hex() { return m_hasher.finish_hex(); }

private:
  void report(bool finished) {
    const auto now = Clock::now();
    if (!m_progress || (!finished && now - m_last_report < k_progress_interval)) {
      return;
    }
    m_last_report = now;
    util::ProgressEvent event;
    event.step = m_state.plan().label;
    event.done = m_state.snapshot().done_bytes();
    event.total = m_state.layout().size;
    event.unit = "bytes";
    event.finished = finished;
    m_progress(event);
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
  const util::ProgressCallback& m_progress;
  OrderedHasher m_hasher;
  std::size_t m_complete = 0;
  Clock::time_point m_last_save = Clock::now();
  Clock::time_point m_last_report = Clock::now() - k_progress_interval;
};

Error partial_error(const std::string& path, const char* action) {
  return Error(ErrorCategory::failure,
               "cannot " + std::string(action) + " the partial download '" + path + "'",
               std::strerror(errno));
}

/// The partial, exactly `size` bytes long (holes where chunks are missing), and the record and
/// validator that let a killed run resume it. The record comes first: a run killed before the
/// file is resized leaves a record whose size the file does not have, which the next run
/// discards, and never a full-size file of holes that could pass for a single stream's bytes.
Result<int> open_partial(const DownloadPlan& plan, const ChunkPlan& chunks) {
  LUME_UNLOCK_TRY(save_chunk_plan(plan.partial_path, chunks));
  if (!chunks.etag.empty()) {
    LUME_UNLOCK_TRY(util::write_file_atomic(validator_path(plan.partial_path), chunks.etag));
  }
  const int fd = ::open(plan.partial_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return partial_error(plan.partial_path, "open");
  }
  if (::ftruncate(fd, static_cast<off_t>(chunks.size)) != 0) {
    auto error = partial_error(plan.partial_path, "size");
    ::close(fd);
    return error;
  }
  return fd;
}

} // namespace

Result<std::optional<DownloadOutcome>> download_parallel(util::HttpClient& http,
                                                         const DownloadPlan& plan,
                                                         const ChunkPlan& chunks,
                                                         const util::ProgressCallback& progress) {
  LUME_UNLOCK_TRY_ASSIGN(const int fd, open_partial(plan, chunks));
  ParallelState state(plan, chunks, fd);
  Coordinator coordinator(state, progress);
  std::size_t missing = 0;
  for (std::size_t i = 0; i < chunks.count(); ++i) {
    missing += chunks.complete(i) ? 0 : 1;
  }
  std::vector<std::thread> connections;
  for (std::size_t i = 0; i < std::min<std::size_t>(std::max(plan.connections, 1u), missing); ++i) {
    connections.emplace_back([&http, &state, first = i == 0] {
      if (first) {
        run_chunk_connection(http, state);
        return;
      }
      util::HttpClient own(http.options());
      run_chunk_connection(own, state);
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
  outcome.requests = state.requests.load();
  return std::optional<DownloadOutcome>(outcome);
}

} // namespace lume_unlock::fetch
