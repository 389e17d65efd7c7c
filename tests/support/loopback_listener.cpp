#include "support/loopback_listener.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace lume_unlock::test {

LoopbackListener::LoopbackListener() {
  m_fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  listen(m_fd, 8);
  socklen_t len = sizeof addr;
  getsockname(m_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  m_port = ntohs(addr.sin_port);
}

LoopbackListener::~LoopbackListener() {
  close(m_fd);
}

} // namespace lume_unlock::test
