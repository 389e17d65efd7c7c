#include "util/private_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace lume_unlock::util {

Status require_owner_only(const std::string& path, const std::string& what) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    return Error(
        ErrorCategory::failure, "cannot examine " + what + " '" + path + "'", std::strerror(errno));
  }
  const unsigned mode = info.st_mode & 07777;
  if ((mode & 077) != 0) {
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", mode);
    return Error(ErrorCategory::usage,
                 what + " '" + path + "'",
                 std::string("has mode ") + octal +
                     ": other users may read it, so it is refused (OpenSSH refuses such keys too)",
                 "run: chmod 600 '" + path + "'");
  }
  return ok_status();
}

} // namespace lume_unlock::util
