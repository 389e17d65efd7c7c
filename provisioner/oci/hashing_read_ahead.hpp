#pragma once

#include "oci/registry_session.hpp"
#include "util/buffer_relay.hpp"
#include "util/result.hpp"
#include "util/sha256.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <thread>

namespace lume_unlock::oci {

/// Reads a byte range of an UploadSource on a second thread, ahead of libcurl, and hashes each
/// byte not hashed before, in order, so the upload's read callback only copies bytes that are
/// ready. The bytes hashed are the very bytes handed to read(), so the digest is of what was
/// sent. A resend restarts the range (start() again); bytes hashed by an earlier attempt are
/// not hashed twice. Memory is bounded by the relay.
class HashingReadAhead {
public:
  /// Without a hasher it only reads ahead (an upload whose digest the registry checks).
  /// `source` and `hasher` must outlive this.
  HashingReadAhead(const UploadSource& source, util::Sha256* hasher);
  ~HashingReadAhead();
  HashingReadAhead(const HashingReadAhead&) = delete;
  HashingReadAhead& operator=(const HashingReadAhead&) = delete;

  /// Stops any earlier range, then reads [begin, end). Ranges follow each other or restart an
  /// earlier one: `begin` is never past the bytes hashed so far.
  void start(std::uint64_t begin, std::uint64_t end);
  /// Up to `capacity` next bytes of the range into `buffer`; 0 at its end; the source's error
  /// when a read failed.
  Result<std::size_t> read(char* buffer, std::size_t capacity);
  /// Stops the thread (bytes read ahead but not taken are dropped, still hashed).
  void stop();

private:
  void run(std::uint64_t begin, std::uint64_t end);

  const UploadSource& m_source;
  util::Sha256* m_hasher;
  std::uint64_t m_hashed = 0; ///< source offset below which every byte is hashed (thread only)
  std::unique_ptr<util::BufferRelay> m_relay;
  util::BufferRelay::Buffer* m_reading = nullptr;
  std::size_t m_read_offset = 0;
  std::optional<Error> m_error; ///< set by the thread before it closes the relay
  std::thread m_thread;
};

} // namespace lume_unlock::oci
