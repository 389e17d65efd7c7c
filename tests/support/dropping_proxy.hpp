#pragma once
// A TCP forwarder on 127.0.0.1 for fault tests and byte counts: every connection is relayed to a
// target port, and once `drop_after_bytes` client-to-server bytes have passed (over all
// connections), every open connection is closed mid-stream, once; the bytes the target sent back
// are counted (received()). Stopped (threads joined) on destruction.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace lume_unlock::test {

class DroppingProxy {
public:
  DroppingProxy(int target_port, std::uint64_t drop_after_bytes)
      : m_target(target_port), m_limit(drop_after_bytes) {
    m_listener = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(m_listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    if (::bind(m_listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(m_listener, 16) != 0) {
      return;
    }
    socklen_t length = sizeof address;
    ::getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &length);
    m_port = ntohs(address.sin_port);
    m_accepting = std::thread([this] { accept_loop(); });
  }

  ~DroppingProxy() {
    m_stop = true;
    ::shutdown(m_listener, SHUT_RDWR);
    ::close(m_listener);
    if (m_accepting.joinable()) {
      m_accepting.join();
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    for (auto& relay : m_relays) {
      relay.join();
    }
  }

  int port() const { return m_port; }
  bool dropped() const { return m_dropped; }
  /// Bytes the target sent to clients so far, over all connections.
  std::uint64_t received() const { return m_received; }

private:
  void accept_loop() {
    while (!m_stop) {
      pollfd waiting{m_listener, POLLIN, 0};
      if (::poll(&waiting, 1, 100) <= 0) {
        continue;
      }
      const int client = ::accept(m_listener, nullptr, nullptr);
      if (client < 0) {
        continue;
      }
      const int server = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = htons(static_cast<std::uint16_t>(m_target));
      if (::connect(server, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        ::close(client);
        ::close(server);
        continue;
      }
      std::lock_guard<std::mutex> lock(m_mutex);
      const int generation = m_generation.load();
      m_relays.emplace_back(
          [this, client, server, generation] { relay(client, server, generation); });
    }
  }

  void relay(int client, int server, int generation) {
    char buffer[16384];
    pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
    while (!m_stop) {
      if (::poll(fds, 2, 100) < 0) {
        break;
      }
      if (m_generation.load() != generation) {
        break; // the drop closes every connection open at that moment
      }
      bool closed = false;
      for (int i = 0; i < 2 && !closed; ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
          continue;
        }
        const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
        if (n <= 0) {
          closed = true;
          break;
        }
        if (i == 1) {
          m_received += static_cast<std::uint64_t>(n);
        }
        if (i == 0 && !m_dropped) {
          m_sent += static_cast<std::uint64_t>(n);
          if (m_sent >= m_limit) {
            m_dropped = true;
            ++m_generation;
            closed = true;
            break;
          }
        }
        if (::write(fds[1 - i].fd, buffer, static_cast<std::size_t>(n)) != n) {
          closed = true;
        }
      }
      if (closed) {
        break;
      }
    }
    ::close(client);
    ::close(server);
  }

  int m_target;
  std::uint64_t m_limit;
  int m_listener = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::atomic<bool> m_dropped{false};
  std::atomic<int> m_generation{0};
  std::atomic<std::uint64_t> m_sent{0};
  std::atomic<std::uint64_t> m_received{0};
  std::thread m_accepting;
  std::mutex m_mutex;
  std::vector<std::thread> m_relays;
};

} // namespace lume_unlock::test
