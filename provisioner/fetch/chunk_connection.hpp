#pragma once

#include "fetch/chunk_plan.hpp"
#include "fetch/resumable_download.hpp"
#include "fetch/retry_budget.hpp"
#include "util/http_client.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace lume_unlock::fetch {

/// What the connections of one parallel download share: the file, the chunks and their progress,
/// the retry budget, and how the download ends early (an error, or the server no longer
/// honouring the ranges).
class ParallelState {
public:
  ParallelState(const DownloadPlan& plan, const ChunkPlan& chunks, int fd);

  const DownloadPlan& plan() const { return m_plan; }
  const ChunkPlan& layout() const { return m_layout; }
  RetryBudget& budget() { return m_budget; }
  int fd() const { return m_fd; }

  /// The next chunk (in file order) that nobody has taken and that is not complete.
  std::optional<std::size_t> take();
  std::uint64_t done(std::size_t chunk) const { return m_done[chunk].load(); }
  /// `bytes` more of `chunk` are in the file (written by its one connection).
  void add_done(std::size_t chunk, std::uint64_t bytes);
  /// The chunks' progress now, for the record beside the partial and the hasher.
  ChunkPlan snapshot() const;
  std::uint64_t contiguous_prefix() const;

  void fail(Error error);
  /// The server answered something that must not be spliced into the file.
  void start_over(const std::string& why);
  bool stopping() const { return m_stop.load(); }
  /// Ends the connections at their next body bytes (the coordinator's own failure).
  void stop();
  std::optional<Error> error() const;
  bool must_start_over() const { return m_start_over.load(); }
  std::string start_over_reason() const;

  /// Counts what connections report (bytes written, a stop).
  std::uint64_t events() const;
  /// Waits until events() differs from `seen` (taken before the caller looked at the chunks, so
  /// nothing reported in between is missed), at most `limit`.
  void wait(std::uint64_t seen, std::chrono::milliseconds limit);

  std::atomic<std::uint64_t> network_bytes{0};
  std::atomic<unsigned> requests{0};

private:
  void wake();

  const DownloadPlan& m_plan;
  ChunkPlan m_layout; ///< size, chunk_bytes, etag; its `done` is the starting point only
  RetryBudget m_budget;
  int m_fd;
  std::unique_ptr<std::atomic<std::uint64_t>[]> m_done;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::uint64_t m_events = 0;
  std::size_t m_next = 0;
  std::optional<Error> m_error;
  std::string m_start_over_reason;
  std::atomic<bool> m_stop{false};
  std::atomic<bool> m_start_over{false};
};

/// One connection of a parallel download: takes chunks in order and GETs each with
/// "Range: bytes=A-B" (and "If-Range" with the ETag) from the plan's original URL, writing the
/// answer at its offset through a bounded buffer. A dropped, stalled or 5xx answer is retried
/// from where the chunk stopped, within the shared budget; 200, another range or another ETag
/// make the whole download start over as one stream.
void run_chunk_connection(util::HttpClient& http, ParallelState& state);

} // namespace lume_unlock::fetch
