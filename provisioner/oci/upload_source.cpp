#include "oci/upload_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lume_unlock::oci {

namespace {

/// Closes the descriptor when the last copy of the source goes.
struct OpenFile {
  int fd = -1;
  explicit OpenFile(int f) : fd(f) {}
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile() { ::close(fd); }
};

} // namespace

Result<UploadSource> file_upload_source(const std::string& path, const std::string& what) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error(ErrorCategory::failure, what, std::strerror(errno));
  }
  auto file = std::make_shared<OpenFile>(fd);
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    return Error(ErrorCategory::failure, what, std::strerror(errno));
  }
  UploadSource source;
  source.size = static_cast<std::uint64_t>(st.st_size);
  source.keep_alive = file;
  source.read_at =
      [fd, path](std::uint64_t offset, char* buffer, std::size_t capacity) -> Result<std::size_t> {
    while (true) {
      ssize_t n = ::pread(fd, buffer, capacity, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0) {
        return Error(ErrorCategory::failure, "cannot read '" + path + "'", std::strerror(errno));
      }
      if (n == 0 && capacity > 0) {
        return Error(ErrorCategory::failure,
                     "cannot read '" + path + "'",
                     "the file shrank while it was being uploaded");
      }
      return static_cast<std::size_t>(n);
    }
  };
  return source;
}

UploadSource bytes_upload_source(std::string_view bytes) {
  UploadSource source;
  source.size = bytes.size();
  source.read_at =
      [bytes](std::uint64_t offset, char* buffer, std::size_t capacity) -> Result<std::size_t> {
    std::size_t n =
        std::min<std::size_t>(capacity, bytes.size() - static_cast<std::size_t>(offset));
    std::copy_n(bytes.data() + offset, n, buffer);
    return n;
  };
  return source;
}

} // namespace lume_unlock::oci
