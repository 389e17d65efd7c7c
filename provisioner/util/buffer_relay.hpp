#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace lume_unlock::util {

/// Fixed-size buffers handed from one thread to another in order: the producer fills a free
/// buffer and publishes it, the consumer takes published buffers in publishing order and gives
/// them back. At most `count` buffers ever exist, so memory stays bounded and a fast producer
/// waits for a slow consumer. Downloads use it to hash and write off libcurl's thread.
class BufferRelay {
public:
  struct Buffer {
    std::unique_ptr<char[]> data;
    std::size_t size = 0;
  };

  BufferRelay(std::size_t count, std::size_t capacity);
  BufferRelay(const BufferRelay&) = delete;
  BufferRelay& operator=(const BufferRelay&) = delete;

  /// Bytes each buffer holds.
  std::size_t capacity() const { return m_capacity; }

  /// Producer: an empty buffer, waiting while all are in use; null once cancelled.
  Buffer* acquire();
  /// Producer: hands a filled buffer to the consumer.
  void publish(Buffer* buffer);
  /// Producer: nothing more will be published.
  void close();

  /// Consumer: the next published buffer, waiting for one; null when the producer closed and
  /// every buffer was taken, or when cancelled.
  Buffer* take();
  /// Consumer: gives a taken buffer back for reuse.
  void release(Buffer* buffer);

  /// Either side: stop now; every waiting and later call returns null.
  void cancel();

private:
  const std::size_t m_count;
  const std::size_t m_capacity;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<std::unique_ptr<Buffer>> m_all;
  std::vector<Buffer*> m_free;
  std::deque<Buffer*> m_published;
  bool m_closed = false;
  bool m_cancelled = false;
};

} // namespace lume_unlock::util
