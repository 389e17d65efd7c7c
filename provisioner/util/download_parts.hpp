#pragma once

// The parts of util/download.hpp's engine, shared by its files and their tests.

#include "util/download.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

namespace lume_unlock::util {

/// "bytes START-END/TOTAL" (RFC 9110 §14.4); TOTAL may be "*", then total stays empty.
struct ContentRange {
  std::optional<std::uint64_t> start;
  std::optional<std::uint64_t> total;
};
ContentRange parse_content_range(std::string_view value);

/// The ETag when it is strong ("\"abc\""); If-Range accepts only strong validators (RFC 9110
/// §13.1.5), so a weak one (W/"abc") or a malformed one is nullopt.
std::optional<std::string> strong_etag(std::string_view value);

/// A file of `size` bytes cut into fixed-size chunks, and how many bytes of each are in the
/// partial (always a prefix of the chunk: a connection writes its range in order). Kept beside
/// the partial as PARTIAL.chunks, so a killed run resumes every chunk where it stopped.
struct ChunkPlan {
  std::uint64_t size = 0;
  std::uint64_t chunk_bytes = 0;
  std::string etag; ///< the strong ETag the bytes came with; empty when unknown
  std::vector<std::uint64_t> done;

  /// Chunks of `chunk_bytes` (> 0) covering `size` bytes, the first `prefix` bytes done (a
  /// single stream's bytes become a parallel download's first chunks).
  static ChunkPlan cut(std::uint64_t size,
                       std::uint64_t chunk_bytes,
                       std::uint64_t prefix = 0,
                       std::string etag = {});

  std::size_t count() const { return done.size(); }
  std::uint64_t start(std::size_t chunk) const { return chunk * chunk_bytes; }
  std::uint64_t length(std::size_t chunk) const;
  bool complete(std::size_t chunk) const { return done[chunk] == length(chunk); }
  /// Bytes from offset 0 with no gap: what may be hashed, or kept by a single stream.
  std::uint64_t contiguous_prefix() const;
  std::uint64_t done_bytes() const;
};

/// PARTIAL.chunks: a version line, "size", "chunk", optional "etag" and one "done" line.
std::string chunk_plan_text(const ChunkPlan& plan);
/// nullopt for anything chunk_plan_text would not write (a damaged record is never trusted).
std::optional<ChunkPlan> parse_chunk_plan(std::string_view text);
std::string chunk_plan_path(const std::string& partial_path);
/// By rename: a killed run leaves the old record or the new one, never half of one.
Status save_chunk_plan(const std::string& partial_path, const ChunkPlan& plan);
std::optional<ChunkPlan> load_chunk_plan(const std::string& partial_path);
/// PARTIAL.etag: the strong ETag a single stream's bytes came with.
std::string validator_path(const std::string& partial_path);
/// What PARTIAL.etag holds; empty when missing or unreadable (the bytes cannot be proven current).
std::string read_validator(const std::string& partial_path);

/// The SHA-256 of a file several connections fill out of order, computed in order: it reads
/// back (from the page cache, normally) the bytes up to the prefix the writers have finished,
/// one reusable 1 MiB block at a time.
class OrderedHasher {
public:
  explicit OrderedHasher(std::string path) : m_path(std::move(path)) {}
  ~OrderedHasher();
  OrderedHasher(const OrderedHasher&) = delete;
  OrderedHasher& operator=(const OrderedHasher&) = delete;

  /// Hashes up to one block more, never past `prefix`; true when it hashed something. Fails
  /// (category failure) when the file cannot be read or is shorter than `prefix`.
  Result<bool> step(std::uint64_t prefix);
  Status catch_up(std::uint64_t prefix);

  std::uint64_t hashed() const { return m_hasher.size(); }
  std::string finish_hex() { return m_hasher.finish_hex(); }
  /// The hash so far, to go on with bytes that are not read back (a single stream's).
  Sha256 release() { return std::move(m_hasher); }

private:
  std::string m_path;
  int m_fd = -1;
  Sha256 m_hasher;
  std::string m_block;
};

/// "cannot <action> the partial download '<path>'" with errno's text (category failure).
Error partial_error(const std::string& path, const std::string& action, int err);

/// Opens the partial for writing (created when missing, never through a link).
Result<int> open_partial_file(const std::string& path);

/// A download's progress events: at most one per interval, and always the last.
class DownloadProgress {
public:
  static constexpr std::chrono::milliseconds k_interval{250};
  DownloadProgress(const ProgressCallback& progress, const std::string& label)
      : m_progress(progress), m_label(label) {}
  void report(std::uint64_t done, std::optional<std::uint64_t> total, bool finished);

private:
  const ProgressCallback& m_progress;
  const std::string& m_label;
  std::chrono::steady_clock::time_point m_last{};
};

/// Fixed-size buffers handed from one thread to another in order: the producer fills a free
/// buffer and publishes it, the consumer takes published buffers in publishing order and gives
/// them back. At most `count` buffers ever exist, so memory stays bounded and a fast producer
/// waits for a slow consumer. Downloads use it to hash and write off libcurl's thread.
class BufferRelay {
public:
  struct Buffer {
    std::unique_ptr<char[]> data;
    std::size_t size = 0;
  };

  BufferRelay(std::size_t count, std::size_t capacity);
  BufferRelay(const BufferRelay&) = delete;
  BufferRelay& operator=(const BufferRelay&) = delete;

  /// Bytes each buffer holds.
  std::size_t capacity() const { return m_capacity; }

  /// Producer: an empty buffer, waiting while all are in use; null once cancelled.
  Buffer* acquire();
  /// Producer: hands a filled buffer to the consumer.
  void publish(Buffer* buffer);
  /// Producer: nothing more will be published.
  void close();

  /// Consumer: the next published buffer, waiting for one; null when the producer closed and
  /// every buffer was taken, or when cancelled.
  Buffer* take();
  /// Consumer: gives a taken buffer back for reuse.
  void release(Buffer* buffer);

  /// Either side: stop now; every waiting and later call returns null.
  void cancel();

private:
  const std::size_t m_count;
  const std::size_t m_capacity;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<std::unique_ptr<Buffer>> m_all;
  std::vector<Buffer*> m_free;
  std::deque<Buffer*> m_published;
  bool m_closed = false;
  bool m_cancelled = false;
};

/// The retries of one download, shared by its connections, and the words of the failures that
/// end it.
class DownloadRetries {
public:
  explicit DownloadRetries(const DownloadPlan& plan);

  /// Spends one retry; fails naming `why` and the attempts when none is left.
  Status retry(const std::string& why, const HttpResponse* response = nullptr);
  /// 5xx, 408, 429 and 503 (after the server's wait) are retried; other statuses end it.
  Status after_status(const HttpResponse& response);
  /// A dropped or stalled connection is retried; a redirect off https and others are not.
  Status after_transport_error(const TransportError& error);
  const std::string& what() const { return m_what; }

private:
  const DownloadPlan& m_plan;
  std::string m_what;
  Retries m_retries;
};

/// The GET every request of a download sends: the plan's URL, redirects followed, no deadline
/// but the stall limit, the bearer token, bodies of 2xx only to the sink. From a byte `from` > 0
/// or to a byte `last` it asks "Range: bytes=FROM-[LAST]", with "If-Range" when `validator` is set.
HttpRequest download_request(const DownloadPlan& plan,
                             std::uint64_t from = 0,
                             std::optional<std::uint64_t> last = std::nullopt,
                             const std::string& validator = "");

/// Sends with the plan's auth: signed, and after a 401 answered by the challenge, once more.
/// A challenge that fails leaves its error in `auth_error`.
Result<HttpResponse, TransportError> send_download(HttpClient& http,
                                                   const DownloadPlan& plan,
                                                   HttpRequest request,
                                                   std::optional<Error>& auth_error);

/// One stream (the whole story in download()'s comment).
Result<DownloadOutcome>
download_resumable(HttpClient& http, const DownloadPlan& plan, const ProgressCallback& progress);

/// The chunks `chunks` lacks over plan.connections connections. nullopt: the server stopped
/// honouring the ranges or the file changed, the caller starts over as one stream.
Result<std::optional<DownloadOutcome>> download_parallel(HttpClient& http,
                                                         const DownloadPlan& plan,
                                                         const ChunkPlan& chunks,
                                                         const ProgressCallback& progress);

} // namespace lume_unlock::util
