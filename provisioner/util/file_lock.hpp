#pragma once

#include "result.hpp"

#include <chrono>
#include <string>

namespace lume_unlock::util {

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
