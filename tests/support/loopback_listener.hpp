#pragma once

namespace lume_unlock::test {

/// A TCP socket listening on 127.0.0.1 at a free port that never accepts: it stands in for a
/// service that only has to be reachable (the guest's sshd). Closed on destruction.
class LoopbackListener {
public:
  LoopbackListener();
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;
  int port() const { return m_port; }

private:
  int m_fd = -1;
  int m_port = 0;
};

} // namespace lume_unlock::test
