#include "atomic_file.hpp"

#include "util/size.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace lume_unlock::util {

namespace {

Error io_error(const std::string& action, const std::string& path, int err) {
  return Error(ErrorCategory::failure, "cannot " + action + " '" + path + "'", std::strerror(err));
}

std::string parent_directory(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

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
  return ::ftruncate(fd, 0) == 0 && write_all(fd, holder + "\n", 0) == 0;
}

std::string seconds_text(std::chrono::milliseconds duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(duration.count()) / 1000.0);
  return text;
}

} // namespace

Result<AtomicFile> AtomicFile::create(const std::string& path, mode_t mode) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) {
    return io_error("create a temporary file for", path, errno);
  }
  if (fchmod(fd, mode) != 0) {
    int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return io_error("set the mode of", tmp, err);
  }
  return AtomicFile(path, tmp, fd);
}

AtomicFile::AtomicFile(std::string path, std::string tmp_path, int fd)
    : m_path(std::move(path)), m_tmp_path(std::move(tmp_path)), m_fd(fd) {}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : m_path(std::move(other.m_path)), m_tmp_path(std::move(other.m_tmp_path)), m_fd(other.m_fd),
      m_committed(other.m_committed) {
  other.m_fd = -1;
  other.m_committed = true; // the moved-from object owns nothing to clean up
}

AtomicFile::~AtomicFile() {
  discard();
}

void AtomicFile::discard() {
  if (m_fd >= 0) {
    close(m_fd);
    m_fd = -1;
  }
  if (!m_committed && !m_tmp_path.empty()) {
    unlink(m_tmp_path.c_str());
  }
}

Status AtomicFile::write(std::string_view bytes) {
  if (m_fd < 0) {
    return Error(ErrorCategory::failure, "cannot write '" + m_path + "'", "file is closed");
  }
  if (const int err = write_all(m_fd, bytes)) {
    return io_error("write", m_tmp_path, err);
  }
  return ok_status();
}

Status AtomicFile::commit() {
  if (m_fd < 0) {
    return Error(ErrorCategory::failure, "cannot commit '" + m_path + "'", "file is closed");
  }
  if (fsync(m_fd) != 0) {
    return io_error("flush", m_tmp_path, errno);
  }
  if (close(m_fd) != 0) {
    m_fd = -1;
    return io_error("close", m_tmp_path, errno);
  }
  m_fd = -1;
  if (rename(m_tmp_path.c_str(), m_path.c_str()) != 0) {
    return io_error("rename into place", m_path, errno);
  }
  m_committed = true;
  // Make the rename itself durable.
  int dir_fd = open(parent_directory(m_path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir_fd >= 0) {
    fsync(dir_fd);
    close(dir_fd);
  }
  return ok_status();
}

int write_all(int fd, std::string_view bytes, std::optional<std::uint64_t> offset) {
  while (!bytes.empty()) {
    const ssize_t n = offset ? ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(*offset))
                             : ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return n < 0 ? errno : EIO;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
    if (offset) {
      *offset += static_cast<std::uint64_t>(n);
    }
  }
  return 0;
}

Status write_file_atomic(const std::string& path, std::string_view content, mode_t mode) {
  LUME_UNLOCK_TRY_ASSIGN(AtomicFile file, AtomicFile::create(path, mode));
  LUME_UNLOCK_TRY(file.write(content));
  return file.commit();
}

bool path_exists(const std::string& path) {
  struct stat info {};
  return lstat(path.c_str(), &info) == 0;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return io_error("read", path, errno);
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    return io_error("read", path, errno);
  }
  return buffer.str();
}

Result<std::string>
read_input_file(const std::string& path, std::size_t max_bytes, const std::string& what) {
  // O_NONBLOCK so that opening a FIFO does not wait for a writer before it is refused.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return io_error("read", path, errno);
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat info {};
  if (fstat(fd, &info) != 0) {
    return io_error("read", path, errno);
  }
  if (!S_ISREG(info.st_mode)) {
    const char* kind = S_ISDIR(info.st_mode) ? "a directory" : "not a regular file";
    return Error(ErrorCategory::usage,
                 "cannot read " + what + " '" + path + "'",
                 std::string("it is ") + kind,
                 "pass the path of a regular file");
  }
  auto too_large = [&] {
    return Error(ErrorCategory::usage,
                 "cannot read " + what + " '" + path + "'",
                 "it is larger than the limit of " + describe_limit(max_bytes),
                 // `what` carries its article ("the signing key"): "a real the …" read wrong.
                 "a real one is far smaller than that; check that this is the right file");
  };
  if (static_cast<std::uint64_t>(info.st_size) > max_bytes) {
    return too_large();
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) {
        continue;
      }
      return io_error("read", path, errno);
    }
    if (got == 0) {
      return text;
    }
    if (text.size() + static_cast<std::size_t>(got) > max_bytes) {
      return too_large(); // the file grew while it was read
    }
    text.append(buffer, static_cast<std::size_t>(got));
  }
}

Status make_directories(const std::string& path, mode_t mode) {
  std::error_code ec;
  const bool created = std::filesystem::create_directories(path, ec);
  if (ec) {
    return Error(ErrorCategory::failure, "cannot create directory '" + path + "'", ec.message());
  }
  if (created) {
    chmod(path.c_str(), mode); // only the leaf; existing directories keep their mode
  }
  return ok_status();
}

Status replace_directory(const std::string& staging, const std::string& target) {
  const auto fail = [&](const std::string& why) {
    return Error(ErrorCategory::failure, "cannot put '" + target + "' in place", why);
  };
  std::error_code ec;
  std::string old;
  if (std::filesystem::exists(std::filesystem::symlink_status(target, ec))) {
    // rename() replaces an empty directory: a fresh one gives the old tree a unique name.
    old = target + ".old.XXXXXX";
    if (mkdtemp(old.data()) == nullptr) {
      return fail(std::string("moving the previous one aside: ") + std::strerror(errno));
    }
    if (::rename(target.c_str(), old.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      ::rmdir(old.c_str());
      return fail("moving the previous one aside: " + why);
    }
  }
  if (::rename(staging.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    if (!old.empty()) {
      ::rename(old.c_str(), target.c_str()); // the previous tree goes back
    }
    return fail(why);
  }
  if (!old.empty()) {
    std::filesystem::remove_all(old, ec);
  }
  return ok_status();
}

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
