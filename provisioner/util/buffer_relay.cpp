#include "util/buffer_relay.hpp"

namespace lume_unlock::util {

BufferRelay::BufferRelay(std::size_t count, std::size_t capacity)
    : m_count(count), m_capacity(capacity) {}

BufferRelay::Buffer* BufferRelay::acquire() {
  std::unique_lock<std::mutex> lock(m_mutex);
  // Buffers are allocated only when the producer runs ahead, so a small blob costs one.
  m_changed.wait(lock, [&] { return m_cancelled || !m_free.empty() || m_all.size() < m_count; });
  if (m_cancelled) {
    return nullptr;
  }
  Buffer* buffer = nullptr;
  if (!m_free.empty()) {
    buffer = m_free.back();
    m_free.pop_back();
  } else {
    m_all.push_back(std::make_unique<Buffer>());
    buffer = m_all.back().get();
    buffer->data = std::make_unique<char[]>(m_capacity);
  }
  buffer->size = 0;
  return buffer;
}

void BufferRelay::publish(Buffer* buffer) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_published.push_back(buffer);
  }
  m_changed.notify_all();
}

void BufferRelay::close() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_closed = true;
  }
  m_changed.notify_all();
}

BufferRelay::Buffer* BufferRelay::take() {
  std::unique_lock<std::mutex> lock(m_mutex);
  m_changed.wait(lock, [&] { return m_cancelled || m_closed || !m_published.empty(); });
  if (m_cancelled || m_published.empty()) {
    return nullptr;
  }
  Buffer* buffer = m_published.front();
  m_published.pop_front();
  return buffer;
}

void BufferRelay::release(Buffer* buffer) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_free.push_back(buffer);
  }
  m_changed.notify_all();
}

void BufferRelay::cancel() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_cancelled = true;
  }
  m_changed.notify_all();
}

} // namespace lume_unlock::util
