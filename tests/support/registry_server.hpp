#pragma once

#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <memory>
#include <string>

namespace lume_unlock::test {

/// Debian's `docker-registry serve CONFIG` (CNCF distribution 2.8) on a free 127.0.0.1 port with
/// storage in a temporary directory; stopped by PID on destruction.
class RegistryServer {
public:
  /// Starts the registry and waits until GET /v2/ answers 200. Returns null and sets `why_not`
  /// when the binary is missing or the server does not come up.
  static std::unique_ptr<RegistryServer> start(std::string& why_not);

  ~RegistryServer();

  /// "127.0.0.1:PORT" — the registry part of references.
  const std::string& host() const { return m_host; }
  int port() const { return m_port; }
  std::string url() const { return "http://" + m_host; }
  const std::string& storage_dir() const { return m_storage; }
  std::string logs() const;

private:
  RegistryServer() = default;
  std::unique_ptr<TempDir> m_dir;
  std::unique_ptr<ChildProcess> m_process;
  std::string m_host;
  std::string m_storage;
  int m_port = 0;
};

} // namespace lume_unlock::test
