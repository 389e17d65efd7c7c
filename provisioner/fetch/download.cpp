#include "fetch/download.hpp"

#include "fetch/chunk_plan.hpp"
#include "fetch/parallel_download.hpp"
#include "fetch/range_probe.hpp"
#include "util/atomic_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace lume_unlock::fetch {

namespace {

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
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
  const bool record = exists(chunk_plan_path(partial));
  const std::uint64_t size = file_size(partial);
  if ((record && !held.chunks) || (held.chunks && held.chunks->size != size)) {
    discard_partial(partial);
    return Held();
  }
  if (held.chunks) {
    held.validator = held.chunks->etag;
  } else {
    held.prefix = size;
    auto validator = util::read_file(validator_path(partial));
    held.validator = validator ? validator.value() : std::string();
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
  if (!exists(chunk_plan_path(partial))) {
    return;
  }
  const auto chunks = load_chunk_plan(partial);
  const std::uint64_t prefix = chunks ? chunks->contiguous_prefix() : 0;
  if (prefix == 0 || ::truncate(partial.c_str(), static_cast<off_t>(prefix)) != 0) {
    discard_partial(partial);
    return;
  }
  if (!chunks->etag.empty() && util::write_file_atomic(validator_path(partial), chunks->etag)) {
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
download(util::HttpClient& http, const DownloadPlan& plan, const util::ProgressCallback& progress) {
  if (plan.connections <= 1 || plan.chunk_bytes == 0) {
    collapse_to_prefix(plan.partial_path);
    return download_resumable(http, plan, progress);
  }
  Held held = held_by(plan);
  RangeSupport support = probe_ranges(http, plan, held.validator);
  if (support.whole_file && !held.validator.empty()) {
    // The file changed since the partial's bytes came (or ranges are refused): they are of no
    // use either way. Ask again without a validator whether the new file comes in ranges.
    discard_partial(plan.partial_path);
    held = Held();
    support = probe_ranges(http, plan, "");
  }
  if (!worth_parallel(plan, support)) {
    collapse_to_prefix(plan.partial_path);
    return download_resumable(http, plan, progress);
  }
  const ChunkPlan chunks = chunks_to_fetch(plan, held, support);
  LUME_UNLOCK_TRY_ASSIGN(auto parallel, download_parallel(http, plan, chunks, progress));
  if (parallel) {
    parallel->requests += 1; // the probe
    return *parallel;
  }
  // Never splice two versions, nor trust a server that answers ranges one way and then another.
  discard_partial(plan.partial_path);
  return download_resumable(http, plan, progress);
}

} // namespace lume_unlock::fetch
