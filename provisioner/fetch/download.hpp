#pragma once

#include "fetch/resumable_download.hpp"
#include "util/http_client.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"

namespace lume_unlock::fetch {

/// Downloads a plan's URL into its partial file the fastest way the server allows (issue 32):
/// one ranged GET of the first byte asks whether it accepts ranges; when it answers 206 with the
/// file's length, the file is at least two chunks and (unpinned) has a strong ETag, the chunks
/// are fetched over plan.connections connections (download_parallel); otherwise (200 to a Range,
/// unknown length, a small file, one connection asked) as one stream (download_resumable).
/// Either resumes what the partial holds: a parallel run's chunks (PARTIAL.chunks) or a single
/// stream's prefix. An unpinned partial resumes only when If-Range with its ETag is honoured. A
/// parallel download the server stops ranging, or whose file changes under it, starts over from
/// zero as one stream. Same outcome and errors as download_resumable.
Result<DownloadOutcome>
download(util::HttpClient& http, const DownloadPlan& plan, const util::ProgressCallback& progress);

} // namespace lume_unlock::fetch
