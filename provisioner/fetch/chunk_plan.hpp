#pragma once

#include "util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::fetch {

/// A file of `size` bytes cut into fixed-size chunks fetched over several connections, and how
/// many bytes of each chunk are already in the partial file (always a prefix of the chunk: a
/// connection writes its range in order). Kept beside the partial as PARTIAL.chunks, so a killed
/// run resumes every chunk where it stopped.
struct ChunkPlan {
  std::uint64_t size = 0;
  std::uint64_t chunk_bytes = 0;
  /// The strong ETag the bytes came with (If-Range of every chunk); empty when unknown.
  std::string etag;
  std::vector<std::uint64_t> done; ///< per chunk, bytes written from its start

  /// Chunks of `chunk_bytes` (> 0) covering `size` bytes, the first `prefix` bytes done (a
  /// single-stream partial's bytes become a parallel download's first chunks).
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

/// The text of PARTIAL.chunks: a version line, then "size", "chunk", optional "etag" and one
/// "done" line of decimals.
std::string chunk_plan_text(const ChunkPlan& plan);
/// nullopt for anything that is not exactly what chunk_plan_text writes with consistent
/// numbers (a damaged record is never trusted: the caller starts from zero).
std::optional<ChunkPlan> parse_chunk_plan(std::string_view text);

/// PARTIAL.chunks.
std::string chunk_plan_path(const std::string& partial_path);
/// Written by rename, so a killed run leaves the old record or the new one, never half of one.
Status save_chunk_plan(const std::string& partial_path, const ChunkPlan& plan);
/// nullopt when there is none or it cannot be read or trusted.
std::optional<ChunkPlan> load_chunk_plan(const std::string& partial_path);

} // namespace lume_unlock::fetch
