#pragma once

#include "result.hpp"

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::util {

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

} // namespace lume_unlock::util
