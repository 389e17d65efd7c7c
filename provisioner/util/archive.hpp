#pragma once

#include "util/result.hpp"

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::util {

/// Why a path is not a safe relative path, or nothing when it is.
enum class PathProblem { empty, absolute, parent_component, nul_byte };

/// Checks that `path` stays inside whatever directory it is taken relative to: not empty, not
/// absolute, no ".." component, no NUL byte. "." components and repeated or trailing slashes are
/// harmless and allowed.
std::optional<PathProblem> relative_path_problem(std::string_view path);

/// Short lower-case text for a problem, to follow the quoted path in a message
/// ("is an absolute path", "contains a '..' component", ...).
const char* describe(PathProblem problem);

/// The components of `path` without empty and "." ones ("./a//b/../c" -> a, b, .., c).
std::vector<std::string> path_components(std::string_view path);

/// The canonical spelling of a safe relative path: "." components and repeated or trailing
/// slashes removed ("./a//b/" -> "a/b"). An all-"." path gives "". The caller has checked it with
/// relative_path_problem().
std::string normalize_relative_path(std::string_view path);

/// One entry of a deterministic archive: a file (bytes in memory, or read from `source_path`)
/// or a directory. `path` is relative ("bin/probe"); its parent directories are added for you.
struct TarEntry {
  enum class Kind { file, directory };

  std::string path;
  Kind kind = Kind::file;
  std::string content;        ///< the file's bytes when source_path is empty
  std::string source_path;    ///< read the file's bytes from here when set
  std::optional<mode_t> mode; ///< any execute bit -> 0755, else 0644; unset: source's mode

  static TarEntry bytes(std::string path, std::string content, mode_t mode = 0644);
  static TarEntry file(std::string path, std::string source_path);
  static TarEntry directory(std::string path);
};

/// Receives the archive's bytes in order.
using ByteSink = std::function<Status(std::string_view)>;

/// Writes a gzip-compressed POSIX tar of `entries` to `sink`, deterministically: entries sorted
/// by path, mtime 0, uid/gid 0 with empty user and group names, modes normalized (directories
/// and executables 0755, other files 0644), and no timestamp or file name in the gzip header.
/// The same entries give the same bytes. Fails on an unsafe path ("entry '../x' contains a '..'
/// component"), a path given twice, a file used as a directory, or an unreadable source file.
Status write_tar_gz(std::vector<TarEntry> entries, const ByteSink& sink);

/// write_tar_gz() into memory.
Result<std::string> tar_gz_bytes(std::vector<TarEntry> entries);

/// write_tar_gz() into `path` through AtomicFile: the file appears only when complete.
Status write_tar_gz_file(const std::string& path, std::vector<TarEntry> entries);

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
