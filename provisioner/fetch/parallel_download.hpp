#pragma once

#include "fetch/chunk_plan.hpp"
#include "fetch/resumable_download.hpp"
#include "util/http_client.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"

#include <optional>

namespace lume_unlock::fetch {

/// Fetches the chunks `chunks` lacks over plan.connections connections at once (the first one
/// is `http`, whose connection the range probe left open; the others are new clients with its
/// options) into plan.partial_path, which ends exactly chunks.size bytes long. The SHA-256 is
/// computed on this thread, trailing the contiguous prefix the connections have finished
/// (OrderedHasher), so it covers every byte in order, resumed ones too, while they download.
/// The chunks' progress is kept beside the partial (PARTIAL.chunks, written atomically at least
/// once a second and whenever a chunk completes), so a killed run resumes each chunk where it
/// stopped. Progress: one step, done = the bytes of all connections.
/// nullopt: the server stopped honouring the ranges or the file changed under them (200, 416,
/// another ETag or range): the caller starts over from zero as one stream, never splicing.
/// Errors as download_resumable's; the partial and its record stay for the next run.
Result<std::optional<DownloadOutcome>> download_parallel(util::HttpClient& http,
                                                         const DownloadPlan& plan,
                                                         const ChunkPlan& chunks,
                                                         const util::ProgressCallback& progress);

} // namespace lume_unlock::fetch
