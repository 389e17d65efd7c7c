#include "util/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <vector>

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

extern char** environ;

namespace lume_unlock::util {

namespace {

Error start_failure(const std::vector<std::string>& argv, int error_number) {
  return Error(ErrorCategory::failure,
               "cannot run '" + (argv.empty() ? std::string() : argv.front()) + "'",
               std::strerror(error_number),
               "check that the program exists and is executable");
}

/// Reads both pipes until each is closed; poll() so a child that fills one pipe while the
/// other is being read cannot block forever.
void drain(int out_fd, int err_fd, std::string& out, std::string& err) {
  struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open_count = 2;
  char buffer[8192];
  while (open_count > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
        continue;
      }
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
}

/// pipe() with both ends close-on-exec (macOS has no pipe2), so a child gets only its dup2'ed
/// copies.
bool close_on_exec_pipe(int fds[2]) {
  if (::pipe(fds) != 0) {
    return false;
  }
  ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  ::fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  return true;
}

/// Where the system says the executable is, possibly through symlinks.
std::optional<std::string> reported_path() {
#if defined(__APPLE__)
  std::uint32_t size = 0;
  _NSGetExecutablePath(nullptr, &size); // asks for the size first
  std::vector<char> buffer(size + 1, '\0');
  if (_NSGetExecutablePath(buffer.data(), &size) != 0) {
    return std::nullopt;
  }
  return std::string(buffer.data());
#elif defined(__linux__)
  return std::string("/proc/self/exe");
#else
  return std::nullopt;
#endif
}

} // namespace

Result<ChildOutcome> run_child(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    return start_failure(argv, EINVAL);
  }
  int out_pipe[2];
  int err_pipe[2];
  if (!close_on_exec_pipe(out_pipe)) {
    return start_failure(argv, errno);
  }
  if (!close_on_exec_pipe(err_pipe)) {
    const int saved = errno;
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return start_failure(argv, saved);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (spawned != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return start_failure(argv, spawned);
  }
  ChildOutcome outcome;
  drain(out_pipe[0], err_pipe[0], outcome.stdout_text, outcome.stderr_text);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  outcome.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return outcome;
}

std::optional<std::string> executable_path() {
  auto reported = reported_path();
  if (!reported) {
    return std::nullopt;
  }
  std::error_code ec;
  const std::filesystem::path resolved = std::filesystem::canonical(*reported, ec);
  if (ec) {
    return std::nullopt;
  }
  return resolved.string();
}

} // namespace lume_unlock::util
