#include "oci/hashing_read_ahead.hpp"

#include <algorithm>
#include <cstring>

namespace lume_unlock::oci {

namespace {

// Four 256 KiB buffers (1 MiB in all, so the peak RSS stays small): large reads from the file,
// and enough read ahead that libcurl does not wait for the disk or the hash.
constexpr std::size_t k_buffers = 4;
constexpr std::size_t k_buffer_bytes = 256 << 10;

} // namespace

HashingReadAhead::HashingReadAhead(const UploadSource& source, util::Sha256* hasher)
    : m_source(source), m_hasher(hasher) {}

HashingReadAhead::~HashingReadAhead() {
  stop();
}

void HashingReadAhead::start(std::uint64_t begin, std::uint64_t end) {
  stop();
  m_error.reset();
  m_relay = std::make_unique<util::BufferRelay>(k_buffers, k_buffer_bytes);
  m_thread = std::thread([this, begin, end] { run(begin, end); });
}

void HashingReadAhead::stop() {
  if (m_thread.joinable()) {
    m_relay->cancel();
    m_thread.join();
  }
  m_reading = nullptr;
  m_read_offset = 0;
}

Result<std::size_t> HashingReadAhead::read(char* buffer, std::size_t capacity) {
  if (m_reading == nullptr) {
    m_reading = m_relay->take();
    m_read_offset = 0;
    if (m_reading == nullptr) {
      // The thread closed the relay: the range is done, or a read failed.
      if (m_error) {
        return *m_error;
      }
      return std::size_t{0};
    }
  }
  const std::size_t n = std::min(capacity, m_reading->size - m_read_offset);
  std::memcpy(buffer, m_reading->data.get() + m_read_offset, n);
  m_read_offset += n;
  if (m_read_offset == m_reading->size) {
    m_relay->release(m_reading);
    m_reading = nullptr;
  }
  return n;
}

void HashingReadAhead::run(std::uint64_t begin, std::uint64_t end) {
  for (std::uint64_t at = begin; at < end;) {
    util::BufferRelay::Buffer* buffer = m_relay->acquire();
    if (buffer == nullptr) {
      return; // stopped
    }
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(k_buffer_bytes, end - at));
    auto n = m_source.read_at(at, buffer->data.get(), want);
    if (!n || n.value() == 0) {
      m_error =
          n ? Error(ErrorCategory::failure, "cannot read the upload", "it ended early") : n.error();
      break;
    }
    buffer->size = n.value();
    if (m_hasher != nullptr && at + buffer->size > m_hashed) {
      const std::uint64_t skip = m_hashed > at ? m_hashed - at : 0;
      m_hasher->update(buffer->data.get() + skip, buffer->size - static_cast<std::size_t>(skip));
      m_hashed = at + buffer->size;
    }
    m_relay->publish(buffer);
    at += buffer->size;
  }
  m_relay->close();
}

} // namespace lume_unlock::oci
