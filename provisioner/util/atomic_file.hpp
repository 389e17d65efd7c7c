#pragma once

#include "result.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::util {

/// A file written under a temporary name in the target's directory and renamed over the target
/// only by commit(). Until then the previous file (if any) is untouched; destroying an
/// uncommitted AtomicFile removes the temporary. commit() fsyncs the data and the directory.
class AtomicFile {
public:
  /// Creates the temporary file. Fails (with the path and errno text) when the directory is
  /// missing or not writable.
  static Result<AtomicFile> create(const std::string& path, mode_t mode = 0644);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  ~AtomicFile();

  Status write(std::string_view bytes);
  /// Flushes, fsyncs and renames into place.
  Status commit();

  const std::string& path() const { return m_path; }
  const std::string& temporary_path() const { return m_tmp_path; }

private:
  AtomicFile(std::string path, std::string tmp_path, int fd);
  void discard();

  std::string m_path;
  std::string m_tmp_path;
  int m_fd = -1;
  bool m_committed = false;
};

/// Writes all of `bytes` to `fd`, at `offset` (pwrite) when given, retrying short writes and EINTR.
/// 0, or the errno of the write that failed.
int write_all(int fd, std::string_view bytes, std::optional<std::uint64_t> offset = std::nullopt);

/// Writes `content` to `path` atomically (AtomicFile in one call).
Status write_file_atomic(const std::string& path, std::string_view content, mode_t mode = 0644);

/// True when something (a file, a directory, a dangling link) is at `path`.
bool path_exists(const std::string& path);

/// Reads a whole file. Fails with the path and errno text.
Result<std::string> read_file(const std::string& path);

/// Reads a whole input file of at most `max_bytes`, refusing anything but a regular file (a
/// directory, /dev/zero, a FIFO) before reading a byte. `what` names the content in errors ("the
/// recipe"). Fails with usage (exit 2) naming the limit when the file is larger or not regular,
/// and with the path and errno text when it cannot be opened or read.
Result<std::string>
read_input_file(const std::string& path, std::size_t max_bytes, const std::string& what);

/// Creates a directory and its parents (mode 0755 unless given). Existing directories are fine.
Status make_directories(const std::string& path, mode_t mode = 0755);

/// Puts the finished directory `staging` at `target` with rename(2). A previous `target` is moved
/// aside under a unique name first and put back when the rename fails, so `target` always holds
/// either the old tree or the new one, never half of each. Fails (category failure) with errno.
Status replace_directory(const std::string& staging, const std::string& target);

/// An exclusive advisory lock (flock(2)) on one file, held until destruction. The holder writes
/// a line describing itself into the file, so a process that waits in vain can say who holds
/// it. The lock dies with its process (the kernel drops it on close), so a crash never leaves a
/// stale lock behind; the description may stay, but it is only read while the lock is held.
class FileLock {
public:
  /// Opens (creating, mode 0644) `path`, whose directory must exist, and takes the lock,
  /// retrying every 50 ms for up to `timeout` (zero: one try). Once held, the file's content is
  /// replaced by `holder` (e.g. "pid 42, 'allow add', since 2026-…"). Fails (category failure)
  /// when the file cannot be opened, naming the path and errno text, or when the lock is still
  /// held after `timeout`: the error's why quotes the holder's description.
  static Result<FileLock>
  acquire(const std::string& path, const std::string& holder, std::chrono::milliseconds timeout);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

  const std::string& path() const { return m_path; }

private:
  FileLock(std::string path, int fd);

  std::string m_path;
  int m_fd = -1;
};

} // namespace lume_unlock::util
