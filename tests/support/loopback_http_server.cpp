#include "support/loopback_http_server.hpp"

#include <chrono>

namespace lume_unlock::test {

LoopbackHttpServer::LoopbackHttpServer() {
  m_port = m_server.bind_to_any_port("127.0.0.1");
  m_thread = std::thread([this] { m_server.listen_after_bind(); });
  while (!m_server.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

LoopbackHttpServer::~LoopbackHttpServer() {
  m_server.stop();
  m_thread.join();
}

} // namespace lume_unlock::test
