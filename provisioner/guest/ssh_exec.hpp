#pragma once

#include <libssh/libssh.h>

namespace lume_unlock::guest {

/// Owns one libssh channel: closed and freed when it goes out of scope, whatever state the
/// command in it reached (closing ends a command that is still writing).
class ChannelGuard {
public:
  explicit ChannelGuard(ssh_channel channel) : m_channel(channel) {}
  ChannelGuard(const ChannelGuard&) = delete;
  ChannelGuard& operator=(const ChannelGuard&) = delete;
  ~ChannelGuard() {
    if (m_channel != nullptr) {
      ssh_channel_close(m_channel);
      ssh_channel_free(m_channel);
    }
  }
  ssh_channel get() const { return m_channel; }

private:
  ssh_channel m_channel;
};

} // namespace lume_unlock::guest
