#pragma once

#include "util/http_client.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"
#include "util/retry_policy.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace lume_unlock::util {

/// A registry's authentication (oci::download_blob): `sign` adds the Authorization a request
/// needs; `challenge` answers a 401 (a new token) so the request is sent once more. Called from
/// several connections' threads, one at a time.
struct DownloadAuth {
  std::function<void(HttpRequest&)> sign;
  std::function<Status(const HttpResponse&)> challenge;
};

struct DownloadPlan {
  std::string url;
  std::string partial_path; ///< created when missing; its bytes are resumed when present
  std::string label;        ///< the progress step
  std::string what;         ///< opens every error; "cannot download 'URL'" when empty
  RetryPolicy retry;
  /// A digest checked afterwards covers these bytes: a partial may then be resumed without the
  /// server proving it is the same file (a splice fails the digest and the caller starts over).
  /// Unpinned, a partial is resumed only with "If-Range" and the ETag its bytes came with.
  bool pinned = false;
  /// The size the bytes must have (a descriptor's): more is an error while streaming.
  std::optional<std::uint64_t> size;
  bool https_only = true; ///< for the request and every redirect
  /// HF_TOKEN for a Hugging Face URL (HttpRequest::bearer_token); empty for none.
  std::string bearer_token;
  DownloadAuth auth;
  /// The hint of a 401 or 403 (how to get access); empty for the generic one.
  std::string denied_hint;
  /// The error of a status no retry changes, when the caller words it (a registry's errors[]).
  std::function<Error(const HttpResponse&)> refused;
  std::chrono::seconds stall_window{60}; ///< below HttpRequest's stall rate this long: a drop
  /// Connections at once where the server accepts ranges; 1 for one stream.
  unsigned connections = 1;
  /// The ranges the connections take in file order; a file under two chunks is one stream.
  std::uint64_t chunk_bytes = 16u << 20;
};

struct DownloadOutcome {
  std::string sha256; ///< of the whole partial file at the end
  std::uint64_t size = 0;
  std::uint64_t network_bytes = 0; ///< body bytes received by this call
  std::uint64_t resumed_from = 0;  ///< bytes the partial held when the call began
};

/// Downloads a plan's URL into its partial file, hashing while streaming, the fastest way the
/// server allows (issue 32). One ranged GET of the first byte asks whether it accepts ranges;
/// when it answers 206 with the length, the file is at least two chunks and (unpinned) has a
/// strong ETag, the chunks come over plan.connections connections, hashed in order off their
/// path, their progress kept beside the partial (PARTIAL.chunks); otherwise as one stream.
/// One stream resumes the partial's bytes with "Range: bytes=N-" (and "If-Range" with the ETag
/// they came with, PARTIAL.etag): 206 from N appends; 200 replaces the file; 416 (unless the
/// file is already whole) and a range from elsewhere restart from zero. A parallel download the
/// server stops ranging, or whose file changes under it, starts over as one stream: never a
/// splice. Drops, stalls, timeouts and 5xx are retried per plan.retry, each resuming; 429 and
/// 503 after their Retry-After or RateLimit reset. The partial stays on failure, for the next
/// run. Fails (category registry) with plan.what and the status or transport error; write
/// errors are category failure.
Result<DownloadOutcome>
download(HttpClient& http, const DownloadPlan& plan, const ProgressCallback& progress);

/// Removes a partial and what a download keeps beside it (PARTIAL.etag, PARTIAL.chunks).
void discard_partial(const std::string& partial_path);

} // namespace lume_unlock::util
