#pragma once

#include "result.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace lume_unlock::util {

/// Bounds on what one extraction may write.
struct ExtractLimits {
  std::uint64_t max_entry_bytes = std::uint64_t(1) << 30; ///< 1 GiB per file
  std::uint64_t max_total_bytes = std::uint64_t(4) << 30; ///< 4 GiB for the whole archive
  std::size_t max_entries = 100000;
};

/// Which archive reader to use.
enum class ArchiveFormat {
  tar, ///< tar, optionally gzip, bzip2, xz or zstd compressed
  zip, ///< zip (stored or deflated); its declared sizes are not trusted, written bytes count
};

/// What to read and how to place it.
struct ExtractOptions {
  ArchiveFormat format = ArchiveFormat::tar;
  /// Leading path components dropped from every entry (and from hard link targets), as a release
  /// archive's top folder ("build/bin/llama-server" -> "bin/llama-server" with 1). A directory
  /// with no component left is skipped; a file or link with none left is refused (it would be
  /// lost silently).
  unsigned strip_components = 0;
};

/// The one way lume-unlock extracts an archive (tar, optionally gzip'd or otherwise compressed,
/// or zip).
/// Everything is written into a temporary directory beside `destination`, and that directory is
/// renamed to `destination` only when every entry passed; on failure nothing remains under either
/// name. `destination` must not exist yet. Rejected, each with its own message (all errors are
/// "cannot extract '<archive>': <why>", category verification):
///   - absolute paths and paths with a ".." component,
///   - symbolic links whose target, resolved inside the destination, leaves it,
///   - hard links to anything but a regular file extracted earlier in the archive,
///   - entries written through a symbolic link, and entries that appear twice,
///   - character and block devices, FIFOs and sockets,
///   - more than `limits` allows (bytes per entry, total bytes, number of entries).
/// Files keep their execute bits (modes are masked with 0755); owners and times are not restored.
Status safe_extract(const std::string& archive_path,
                    const std::string& destination,
                    const ExtractLimits& limits = {},
                    const ExtractOptions& options = {});

} // namespace lume_unlock::util
