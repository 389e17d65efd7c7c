#pragma once

#include <httplib.h>

#include <thread>

namespace lume_unlock::test {

/// A real HTTP server (cpp-httplib) on 127.0.0.1 at a free port, listening on its own thread
/// from construction until destruction. Tests add handlers through `server()`.
class LoopbackHttpServer {
public:
  LoopbackHttpServer();
  ~LoopbackHttpServer();
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;
  httplib::Server& server() { return m_server; }
  int port() const { return m_port; }

private:
  httplib::Server m_server;
  int m_port = 0;
  std::thread m_thread;
};

} // namespace lume_unlock::test
