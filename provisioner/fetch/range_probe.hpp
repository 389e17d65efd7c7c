#pragma once

#include "fetch/resumable_download.hpp"
#include "util/http_client.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace lume_unlock::fetch {

/// What one ranged GET learned of the file at a plan's URL.
struct RangeSupport {
  /// The server answered "Range: bytes=0-0" (and the If-Range sent, if any) with 206.
  bool ranges = false;
  std::optional<std::uint64_t> size; ///< the Content-Range total; empty when "*"
  std::string etag;                  ///< the strong ETag of the answer; empty when none
  /// It answered 200 (the whole file): no ranges, or the validator no longer names its file.
  bool whole_file = false;
};

/// GETs the first byte of the plan's URL (through its redirects, with its token), with
/// "If-Range: <validator>" when one is given, so a 206 also proves the server still has the file
/// the validator names. A 200 is cut off at its first byte. Anything else (an error status, a
/// dropped connection) is "no ranges": the single stream that follows then meets the failure
/// itself and reports it with its retries.
RangeSupport
probe_ranges(util::HttpClient& http, const DownloadPlan& plan, const std::string& validator);

} // namespace lume_unlock::fetch
