#include "util/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

namespace lume_unlock::util {

namespace {

constexpr std::chrono::milliseconds k_retry_interval{50};
/// The holder's description is one short line; more than this is not ours.
constexpr std::size_t k_max_holder_bytes = 4096;

/// The holder's description as written into the lock file, or "" when unreadable.
std::string read_holder(int fd) {
  std::string text(k_max_holder_bytes, '\0');
  const ssize_t got = ::pread(fd, text.data(), text.size(), 0);
  text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) {
    text.pop_back();
  }
  return text;
}

bool write_holder(int fd, const std::string& holder) {
  const std::string line = holder + "\n";
  return ::ftruncate(fd, 0) == 0 &&
         ::pwrite(fd, line.data(), line.size(), 0) == static_cast<ssize_t>(line.size());
}

std::string seconds_text(std::chrono::milliseconds duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(duration.count()) / 1000.0);
  return text;
}

} // namespace

Result<FileLock> FileLock::acquire(const std::string& path,
                                   const std::string& holder,
                                   std::chrono::milliseconds timeout) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Error(ErrorCategory::failure,
                 "lock file '" + path + "'",
                 std::string("cannot open it: ") + std::strerror(errno),
                 "check that the directory exists and is writable by you");
  }
  FileLock lock(path, fd);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return Error(ErrorCategory::failure,
                   "lock file '" + path + "'",
                   std::string("flock failed: ") + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      const std::string current = read_holder(fd);
      return Error(ErrorCategory::failure,
                   "lock file '" + path + "'",
                   "still held after " + seconds_text(timeout) + " by " +
                       (current.empty() ? "another process" : current),
                   "wait for it to finish and run the command again, or raise --lock-timeout");
    }
    std::this_thread::sleep_for(k_retry_interval);
  }
  if (!write_holder(fd, holder)) {
    return Error(ErrorCategory::failure,
                 "lock file '" + path + "'",
                 std::string("cannot write it: ") + std::strerror(errno),
                 "check free space and permissions of its directory");
  }
  return lock;
}

FileLock::FileLock(std::string path, int fd) : m_path(std::move(path)), m_fd(fd) {}

FileLock::FileLock(FileLock&& other) noexcept : m_path(std::move(other.m_path)), m_fd(other.m_fd) {
  other.m_fd = -1;
}

FileLock::~FileLock() {
  if (m_fd >= 0) {
    ::close(m_fd); // closing the last descriptor releases the flock
  }
}

} // namespace lume_unlock::util
