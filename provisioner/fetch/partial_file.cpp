#include "fetch/partial_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lume_unlock::fetch {

namespace {
constexpr std::size_t k_write_buffer = 1 << 20;
}

PartialFile::~PartialFile() {
  if (m_fd >= 0) {
    close(m_fd);
  }
}

Status PartialFile::open_and_rehash(const std::string& path) {
  m_path = path;
  m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (m_fd < 0) {
    return io_error("open", errno);
  }
  std::string block(k_write_buffer, '\0');
  for (;;) {
    auto got = ::read(m_fd, block.data(), block.size());
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      return io_error("read", errno);
    }
    if (got == 0) {
      break;
    }
    m_hasher.update(block.data(), static_cast<std::size_t>(got));
  }
  return ok_status();
}

Status PartialFile::truncate() {
  m_buffer.clear();
  if (ftruncate(m_fd, 0) != 0 || lseek(m_fd, 0, SEEK_SET) != 0) {
    return io_error("truncate", errno);
  }
  m_hasher = util::Sha256();
  return ok_status();
}

Status PartialFile::append(std::string_view chunk) {
  m_hasher.update(chunk);
  m_buffer.append(chunk);
  return m_buffer.size() >= k_write_buffer ? flush() : ok_status();
}

Status PartialFile::flush() {
  std::string_view rest = m_buffer;
  while (!rest.empty()) {
    auto written = ::write(m_fd, rest.data(), rest.size());
    if (written < 0) {
      if (errno == EINTR) {
        continue;
      }
      return io_error("write", errno);
    }
    rest.remove_prefix(static_cast<std::size_t>(written));
  }
  m_buffer.clear();
  return ok_status();
}

Error PartialFile::io_error(const char* action, int err) const {
  return Error(ErrorCategory::failure,
               "cannot " + std::string(action) + " the partial download '" + m_path + "'",
               std::strerror(err));
}

} // namespace lume_unlock::fetch
