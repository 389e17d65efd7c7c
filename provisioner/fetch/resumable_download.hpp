#pragma once

#include "util/http_client.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace lume_unlock::fetch {

struct DownloadPlan {
  std::string url;          ///< https only (redirects too)
  std::string partial_path; ///< created when missing; its bytes are resumed when present
  std::string label;        ///< the progress step
  unsigned max_retries = 3;
  std::chrono::milliseconds retry_backoff{200};
  /// A digest checked afterwards covers these bytes: a partial may then be resumed without the
  /// server proving it is the same file (a splice fails the digest and the caller starts over).
  /// Unpinned, a partial is resumed only with "If-Range" and the ETag its bytes came with.
  bool pinned = false;
  /// HF_TOKEN for a Hugging Face URL (util::HttpRequest::bearer_token); empty for none.
  std::string bearer_token;
  /// The hint of a 401 or 403 (how to get access); empty for the generic one.
  std::string denied_hint;
  std::uint32_t stall_bytes_per_second = 1024;
  std::chrono::seconds stall_window{60};
  /// 429 and 503 are retried after the server's Retry-After, up to this long; a longer wait
  /// fails at once naming it.
  std::chrono::seconds max_retry_after{120};
  /// Connections at once where the server accepts ranges (download() in parallel_download.hpp);
  /// 1 for one stream. download_resumable itself always uses one.
  unsigned connections = 1;
  /// The size of the ranges the connections take in order; a file under two chunks is
  /// fetched as one stream.
  std::uint64_t chunk_bytes = 16u << 20;
};

struct DownloadOutcome {
  std::string sha256; ///< of the whole partial file at the end
  std::uint64_t size = 0;
  std::uint64_t network_bytes = 0; ///< body bytes received by this call
  /// Bytes the partial already held when the call began (left by an earlier run).
  std::uint64_t resumed_from = 0;
  unsigned requests = 0;
};

/// GETs `url` into `partial_path`, hashing while streaming (memory stays flat whatever the size).
/// Bytes already in the file are re-hashed and resumed with "Range: bytes=N-" (and "If-Range"
/// with the ETag they came with, kept beside the partial as PARTIAL.etag): 206 with a
/// Content-Range starting at N appends; 200 replaces the file from zero; 416 (unless it says the
/// file is already whole) and a Content-Range starting elsewhere restart from zero. An unpinned
/// partial without a known ETag starts from zero. Dropped and stalled connections, timeouts
/// and 5xx answers are retried up to `max_retries` times, each resuming; 429 and 503 after their
/// Retry-After. The file is left in place on failure, for the next run. Fails (category
/// registry) naming the redacted URL and the status or transport error; write errors are
/// category failure.
Result<DownloadOutcome> download_resumable(util::HttpClient& http,
                                           const DownloadPlan& plan,
                                           const util::ProgressCallback& progress);

/// The GET every request of a download sends: the plan's (original) URL, redirects followed over
/// https only, no deadline but the stall limit, the bearer token, bodies of 2xx only to the sink.
util::HttpRequest download_request(const DownloadPlan& plan);

/// PARTIAL.etag: the strong ETag a partial's bytes came with.
std::string validator_path(const std::string& partial_path);

/// Removes a partial and what a download keeps beside it (PARTIAL.etag, PARTIAL.chunks).
void discard_partial(const std::string& partial_path);

} // namespace lume_unlock::fetch
