#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::test {

/// A child process for integration tests (simulators, registries, sshd wrappers). Started with
/// an explicit argv and extra environment; stdout and stderr go to files in `log_dir` so a
/// failing test can print them. The destructor stops the process (SIGTERM, then SIGKILL).
class ChildProcess {
public:
  struct Options {
    std::vector<std::string> argv;
    std::map<std::string, std::string> env; ///< added to (or overriding) the parent environment
    std::string log_dir;                    ///< where <name>.stdout / <name>.stderr go
    std::string name = "child";
    std::string working_dir; ///< empty = inherit
  };

  explicit ChildProcess(Options options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return m_pid; }
  bool running();
  /// Sends SIGTERM, waits up to `grace`, then SIGKILL. Returns the exit status (or -signal).
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));
  /// Waits until stdout contains a complete line; returns it (nullopt on timeout or exit).
  std::optional<std::string> wait_for_stdout_line(std::chrono::milliseconds timeout);
  std::string stdout_text() const;
  std::string stderr_text() const;

private:
  Options m_options;
  pid_t m_pid = -1;
  std::optional<int> m_status;
  std::string m_stdout_path;
  std::string m_stderr_path;
};

/// The result of running a command to completion.
struct CommandOutput {
  int exit_status = -1;
  std::string stdout_text;
  std::string stderr_text;
};

/// Runs argv to completion (no shell), with extra environment and optional stdin bytes.
CommandOutput run_command(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {},
                          const std::string& stdin_bytes = {});

/// A TCP port on 127.0.0.1 that was free a moment ago.
int free_loopback_port();

/// Polls until something accepts TCP connections on 127.0.0.1:port.
bool wait_for_tcp(int port, std::chrono::milliseconds timeout);

/// True when running under CI (env CI=true), where a missing test server is a failure.
bool running_in_ci();

} // namespace lume_unlock::test

/// For tests that need an external server or tool: fails under CI, skips with the reason elsewhere.
#define LUME_UNLOCK_REQUIRE(condition, reason)                                                     \
  do {                                                                                             \
    if (!(condition)) {                                                                            \
      if (::lume_unlock::test::running_in_ci()) {                                                  \
        FAIL() << "required for this test under CI: " << (reason);                                 \
      } else {                                                                                     \
        GTEST_SKIP() << (reason);                                                                  \
      }                                                                                            \
    }                                                                                              \
  } while (false)
