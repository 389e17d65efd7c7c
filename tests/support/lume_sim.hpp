#pragma once

#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lume_unlock::test {

/// A lume-sim process on a free 127.0.0.1 port (`--port 0`, port read from its first stdout
/// line) with its VM home in a fresh temporary directory. Stopped by PID on destruction.
class LumeSim {
public:
  /// `binary` is the lume-sim executable; `extra_args` follow --port/--home; `env` is added
  /// to its environment (Lume reads push credentials from there).
  LumeSim(const std::string& binary,
          std::vector<std::string> extra_args = {},
          std::map<std::string, std::string> env = {});

  /// False when the process did not come up; `failure()` says why (for LUME_UNLOCK_REQUIRE).
  bool started() const { return m_port > 0; }
  const std::string& failure() const { return m_failure; }
  int port() const { return m_port; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  const std::string& home() const { return m_home; }
  ChildProcess& process() { return *m_process; }
  /// Stops the process (SIGTERM, then SIGKILL); the port is then closed.
  void stop() {
    if (m_process) {
      m_process->stop();
    }
  }

private:
  TempDir m_dir;
  std::string m_home;
  std::unique_ptr<ChildProcess> m_process;
  int m_port = -1;
  std::string m_failure;
};

} // namespace lume_unlock::test
