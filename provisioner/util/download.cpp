#include "util/atomic_file.hpp"
#include "util/download_parts.hpp"
#include "util/text_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

namespace lume_unlock::util {

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
  range.total = parse_decimal(value.substr(slash + 1));
  const auto span = value.substr(0, slash);
  if (const auto dash = span.find('-'); dash != std::string_view::npos) {
    range.start = parse_decimal(span.substr(0, dash));
  }
  return range;
}

std::optional<std::string> strong_etag(std::string_view value) {
  if (value.size() < 2 || value.front() != '"' || value.back() != '"') {
    return std::nullopt;
  }
  for (char c : value.substr(1, value.size() - 2)) {
    // etagc (RFC 9110 §8.8.3): visible characters but the quote, and obs-text.
    if (c == '"' || static_cast<unsigned char>(c) < 0x21 || c == 0x7f) {
      return std::nullopt;
    }
  }
  return std::string(value);
}

namespace {

/// What one ranged GET learned of the file: 206 to "bytes=0-0" (and to the If-Range sent), the
/// Content-Range total and the strong ETag; or 200 (the whole file: no ranges, or the validator
/// no longer names the file).
struct RangeSupport {
  bool ranges = false;
  std::optional<std::uint64_t> size;
  std::string etag;
  bool whole_file = false;
};

/// A 200 is cut off at its first byte. Anything else (an error, a drop) is "no ranges": the
/// single stream that follows meets the failure itself and reports it with its retries.
RangeSupport
probe_ranges(HttpClient& http, const DownloadPlan& plan, const std::string& validator) {
  RangeSupport support;
  HttpRequest request = download_request(plan, 0, 0, validator);
  bool partial = false;
  request.on_sink_start = [&](const HttpResponse& head) {
    partial = head.status == 206;
    if (partial) {
      const auto range = parse_content_range(head.header("Content-Range").value_or(""));
      partial = range.start == 0u;
      support.size = range.total;
      support.etag = strong_etag(head.header("ETag").value_or("")).value_or("");
    }
    support.whole_file = head.status == 200;
    return partial; // a 200 is the whole file: stop it here
  };
  request.body_sink = [](std::string_view) { return true; };
  std::optional<Error> auth_error;
  auto response = send_download(http, plan, request, auth_error);
  support.ranges = partial && response.ok() && response.value().status == 206;
  return support;
}

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

/// What an earlier run left: a parallel run's chunks, or a single stream's prefix, and the ETag
/// the bytes came with. A record that cannot be trusted, or that claims bytes the file does not
/// have, is discarded with the partial.
struct Held {
  std::optional<ChunkPlan> chunks;
  std::uint64_t prefix = 0; ///< a single stream's bytes (without a record)
  std::string validator;
};

Held held_by(const DownloadPlan& plan) {
  Held held;
  const std::string& partial = plan.partial_path;
  held.chunks = load_chunk_plan(partial);
  const bool record = path_exists(chunk_plan_path(partial));
  const std::uint64_t size = file_size(partial);
  if ((record && !held.chunks) || (held.chunks && held.chunks->size != size)) {
    discard_partial(partial);
    return Held();
  }
  if (held.chunks) {
    held.validator = held.chunks->etag;
  } else {
    held.prefix = size;
    held.validator = read_validator(partial);
  }
  const bool has_bytes = held.prefix > 0 || (held.chunks && held.chunks->done_bytes() > 0);
  if (has_bytes && !plan.pinned && held.validator.empty()) {
    discard_partial(partial); // nothing proves these bytes are of the file served now
    return Held();
  }
  return held;
}

/// Hands a parallel run's partial to a single stream: only the contiguous prefix of its chunks
/// is kept (a single stream appends at the file's end, so holes must not be left before it).
void collapse_to_prefix(const std::string& partial) {
  if (!path_exists(chunk_plan_path(partial))) {
    return;
  }
  const auto chunks = load_chunk_plan(partial);
  const std::uint64_t prefix = chunks ? chunks->contiguous_prefix() : 0;
  if (prefix == 0 || ::truncate(partial.c_str(), static_cast<off_t>(prefix)) != 0) {
    discard_partial(partial);
    return;
  }
  if (!chunks->etag.empty() && write_file_atomic(validator_path(partial), chunks->etag)) {
    ::unlink(chunk_plan_path(partial).c_str());
    return;
  }
  discard_partial(partial);
}

bool worth_parallel(const DownloadPlan& plan, const RangeSupport& support) {
  return support.ranges && support.size && *support.size >= 2 * plan.chunk_bytes &&
         (plan.pinned || !support.etag.empty());
}

/// The chunks to fetch: the earlier run's where they describe this file, else its prefix.
ChunkPlan chunks_to_fetch(const DownloadPlan& plan, const Held& held, const RangeSupport& support) {
  const std::uint64_t size = *support.size;
  const bool same_file =
      held.validator.empty() || support.etag.empty() || held.validator == support.etag;
  if (!same_file || (held.chunks && held.chunks->size != size) || held.prefix > size) {
    discard_partial(plan.partial_path);
    return ChunkPlan::cut(size, plan.chunk_bytes, 0, support.etag);
  }
  if (held.chunks && held.chunks->chunk_bytes == plan.chunk_bytes) {
    ChunkPlan chunks = *held.chunks;
    chunks.etag = support.etag;
    return chunks;
  }
  const std::uint64_t prefix = held.chunks ? held.chunks->contiguous_prefix() : held.prefix;
  return ChunkPlan::cut(size, plan.chunk_bytes, prefix, support.etag);
}

} // namespace

Result<DownloadOutcome>
download(HttpClient& http, const DownloadPlan& plan, const ProgressCallback& progress) {
  if (plan.connections > 1 && plan.chunk_bytes > 0 &&
      !(plan.size && *plan.size < 2 * plan.chunk_bytes)) {
    Held held = held_by(plan);
    RangeSupport support = probe_ranges(http, plan, held.validator);
    if (support.whole_file && !held.validator.empty()) {
      // The file changed since the partial's bytes came (or ranges are refused): they are of no
      // use either way. Ask again without a validator whether the new file comes in ranges.
      discard_partial(plan.partial_path);
      held = Held();
      support = probe_ranges(http, plan, "");
    }
    if (worth_parallel(plan, support)) {
      LUME_UNLOCK_TRY_ASSIGN(
          auto parallel,
          download_parallel(http, plan, chunks_to_fetch(plan, held, support), progress));
      if (parallel) {
        return *parallel;
      }
      // Never splice two versions, nor trust a server that answers ranges one way and then
      // another: what is left goes, and one stream starts from zero.
      discard_partial(plan.partial_path);
    }
  }
  collapse_to_prefix(plan.partial_path);
  return download_resumable(http, plan, progress);
}

DownloadRetries::DownloadRetries(const DownloadPlan& plan)
    : m_plan(plan),
      m_what(plan.what.empty() ? "cannot download '" + redact_url(plan.url) + "'" : plan.what),
      m_retries(plan.retry) {}

Status DownloadRetries::retry(const std::string& why, const HttpResponse* response) {
  const auto next = m_retries.next(response);
  if (next.verdict == Retries::Verdict::wait_too_long) {
    return Error(ErrorCategory::registry,
                 m_what,
                 why + ": the server asks to wait " + std::to_string(next.asked->count()) +
                     " s (Retry-After), longer than the " +
                     std::to_string(m_plan.retry.max_server_wait.count()) + " s lume-unlock waits",
                 "run the command again later: the download resumes where it stopped");
  }
  if (next.verdict == Retries::Verdict::spent) {
    return Error(ErrorCategory::registry,
                 m_what,
                 why + " (after " + std::to_string(next.attempts) + " attempts)",
                 "run the command again: the download resumes where it stopped");
  }
  return ok_status();
}

Status DownloadRetries::after_status(const HttpResponse& response) {
  std::string why = "HTTP " + std::to_string(response.status);
  if (retryable_status(response.status)) {
    return retry(why, &response);
  }
  if (m_plan.refused) {
    return m_plan.refused(response);
  }
  if (!response.body.empty()) {
    why += ": " + body_preview(response.body);
  }
  const bool denied = response.status == 401 || response.status == 403;
  return Error(ErrorCategory::registry, m_what, why, denied ? m_plan.denied_hint : "");
}

Status DownloadRetries::after_transport_error(const TransportError& error) {
  if (error.kind == TransportError::Kind::protocol) {
    return Error(ErrorCategory::registry,
                 m_what,
                 "a redirect left https (" + error.detail + ")",
                 "artifacts are fetched over TLS only; ask for an https:// download link");
  }
  if (!retryable_transport(error.kind)) {
    return Error(ErrorCategory::registry, m_what, error.detail);
  }
  return retry(error.detail);
}

HttpRequest download_request(const DownloadPlan& plan,
                             std::uint64_t from,
                             std::optional<std::uint64_t> last,
                             const std::string& validator) {
  HttpRequest request{"GET", plan.url};
  if (from > 0 || last) {
    request.headers.push_back(
        {"Range", "bytes=" + std::to_string(from) + "-" + (last ? std::to_string(*last) : "")});
    if (!validator.empty()) {
      request.headers.push_back({"If-Range", validator});
    }
  }
  request.follow_redirects = true; // release assets, model hubs and registries redirect to CDNs
  request.https_only = plan.https_only;
  request.timeout = std::chrono::milliseconds(0); // big files: only the stall limit applies
  request.stall_window = plan.stall_window;
  request.bearer_token = plan.bearer_token;
  request.sink_success_only = true;
  return request;
}

Result<HttpResponse, TransportError> send_download(HttpClient& http,
                                                   const DownloadPlan& plan,
                                                   HttpRequest request,
                                                   std::optional<Error>& auth_error) {
  static std::mutex auth_mutex; // the connections share the registry session's tokens
  const auto sign = [&] {
    if (plan.auth.sign) {
      std::lock_guard<std::mutex> lock(auth_mutex);
      plan.auth.sign(request);
    }
  };
  sign();
  auto response = http.send(request);
  if (!response || response.value().status != 401 || !plan.auth.challenge) {
    return response;
  }
  {
    std::lock_guard<std::mutex> lock(auth_mutex);
    if (auto answered = plan.auth.challenge(response.value()); !answered) {
      auth_error = answered.error();
      return response;
    }
  }
  sign();
  return http.send(request);
}

Error partial_error(const std::string& path, const std::string& action, int err) {
  return Error(ErrorCategory::failure,
               "cannot " + action + " the partial download '" + path + "'",
               std::strerror(err));
}

Result<int> open_partial_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return partial_error(path, "open", errno);
  }
  return fd;
}

void DownloadProgress::report(std::uint64_t done,
                              std::optional<std::uint64_t> total,
                              bool finished) {
  const auto now = std::chrono::steady_clock::now();
  if (!m_progress || (!finished && now - m_last < k_interval)) {
    return;
  }
  m_last = now;
  ProgressEvent event;
  event.step = m_label;
  event.done = done;
  event.total = total;
  event.unit = "bytes";
  event.finished = finished;
  m_progress(event);
}

std::string validator_path(const std::string& partial_path) {
  return partial_path + ".etag";
}

std::string read_validator(const std::string& partial_path) {
  auto validator = read_file(validator_path(partial_path));
  return validator ? validator.value() : std::string();
}

void discard_partial(const std::string& partial_path) {
  unlink(partial_path.c_str());
  unlink(validator_path(partial_path).c_str());
  unlink(chunk_plan_path(partial_path).c_str());
}

} // namespace lume_unlock::util
