#include "pipeline/state_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lume_unlock::pipeline {

namespace {

Error unusable(const std::string& dir, const std::string& why) {
  return Error(ErrorCategory::usage,
               "state directory '" + dir + "'",
               why,
               "pass a directory you own with --state-dir or set LUME_UNLOCK_STATE_DIR to one");
}

} // namespace

Status check_state_dir_readable(const std::string& dir) {
  if (dir.empty()) {
    return unusable(dir, "the path is empty");
  }
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) {
    if (errno == ENOENT) {
      return ok_status(); // nothing recorded yet; the first create makes it
    }
    return unusable(dir, std::strerror(errno));
  }
  if (!S_ISDIR(info.st_mode)) {
    return unusable(dir, "it is not a directory");
  }
  if (::access(dir.c_str(), R_OK | X_OK) != 0) {
    return unusable(dir, "it is not readable (" + std::string(std::strerror(errno)) + ")");
  }
  return ok_status();
}

} // namespace lume_unlock::pipeline
