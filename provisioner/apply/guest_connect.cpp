#include "apply/guest_connect.hpp"

#include "util/error.hpp"

#include <thread>

namespace lume_unlock::apply {

std::unique_ptr<guest::GuestSession> connect_when_ready(const GuestConnector& connect,
                                                        std::chrono::milliseconds ssh_wait) {
  const auto deadline = std::chrono::steady_clock::now() + ssh_wait;
  for (;;) {
    try {
      return connect();
    } catch (const Error& error) {
      if (error.category() != ErrorCategory::guest ||
          std::chrono::steady_clock::now() >= deadline) {
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
}

} // namespace lume_unlock::apply
