#include "oci/hashing_file_writer.hpp"

#include <algorithm>
#include <cstring>

namespace lume_unlock::oci {

namespace {

// Four 256 KiB buffers (1 MiB in all, so the peak RSS stays small): large writes for the disk,
// and enough slack that a write stalling for a moment does not stall the network.
constexpr std::size_t k_buffers = 4;
constexpr std::size_t k_buffer_bytes = 256 << 10;

} // namespace

HashingFileWriter::HashingFileWriter(util::AtomicFile& file)
    : m_file(file), m_relay(k_buffers, k_buffer_bytes), m_thread([this] { run(); }) {}

HashingFileWriter::~HashingFileWriter() {
  if (m_thread.joinable()) {
    m_relay.cancel();
    m_thread.join();
  }
}

bool HashingFileWriter::push(std::string_view chunk) {
  while (!chunk.empty()) {
    if (m_filling == nullptr) {
      m_filling = m_relay.acquire();
      if (m_filling == nullptr) {
        return false; // the thread cancelled the relay after a write error
      }
    }
    const std::size_t n = std::min(chunk.size(), m_relay.capacity() - m_filling->size);
    std::memcpy(m_filling->data.get() + m_filling->size, chunk.data(), n);
    m_filling->size += n;
    chunk.remove_prefix(n);
    if (m_filling->size == m_relay.capacity()) {
      m_relay.publish(m_filling);
      m_filling = nullptr;
    }
  }
  return true;
}

Result<std::string> HashingFileWriter::finish() {
  if (m_filling != nullptr) {
    m_relay.publish(m_filling);
    m_filling = nullptr;
  }
  m_relay.close();
  m_thread.join();
  if (m_error) {
    return *m_error;
  }
  return m_hasher.finish_hex();
}

void HashingFileWriter::run() {
  while (BufferRelay::Buffer* buffer = m_relay.take()) {
    const std::string_view bytes(buffer->data.get(), buffer->size);
    m_hasher.update(bytes);
    if (auto written = m_file.write(bytes); !written) {
      m_error = written.error();
      m_relay.cancel();
      return;
    }
    m_relay.release(buffer);
  }
}

} // namespace lume_unlock::oci
