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
/// Bytes already in the file are re-hashed and resumed with "Range: bytes=N-": 206 with a
/// Content-Range starting at N appends; 200 replaces the file from zero; 416 (unless it says the
/// file is already whole) and a Content-Range starting elsewhere restart from zero. Dropped
/// connections, timeouts and 5xx answers are retried up to `max_retries` times, each resuming.
/// The file is left in place on failure, for the next run. Fails (category registry) naming the
/// redacted URL and the status or transport error; write errors are category failure.
Result<DownloadOutcome> download_resumable(util::HttpClient& http,
                                           const DownloadPlan& plan,
                                           const util::ProgressCallback& progress);

} // namespace lume_unlock::fetch
