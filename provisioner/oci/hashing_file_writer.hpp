#pragma once

#include "oci/buffer_relay.hpp"
#include "util/atomic_file.hpp"
#include "util/result.hpp"
#include "util/sha256.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace lume_unlock::oci {

/// Hashes and writes a downloading blob's bytes on a second thread, in the order they arrive,
/// so the thread that receives them (libcurl's, which also decrypts TLS) only copies each
/// chunk once into a free buffer. Memory is bounded by the relay: a slow disk makes push()
/// wait. The digest still covers every byte pushed, in order; the caller checks it before it
/// commits the file.
class HashingFileWriter {
public:
  /// `file` must outlive the writer.
  explicit HashingFileWriter(util::AtomicFile& file);
  /// Stops the thread; bytes not yet written are dropped (the file is not committed then).
  ~HashingFileWriter();
  HashingFileWriter(const HashingFileWriter&) = delete;
  HashingFileWriter& operator=(const HashingFileWriter&) = delete;

  /// Copies `chunk` in. False when the thread stopped on a write error (finish() returns it).
  bool push(std::string_view chunk);
  /// Hands over the last bytes, waits until everything is written, and returns the SHA-256 of
  /// every byte pushed (64 hex characters) or the first write error. Call once.
  Result<std::string> finish();

private:
  void run();

  util::AtomicFile& m_file;
  BufferRelay m_relay;
  BufferRelay::Buffer* m_filling = nullptr;
  util::Sha256 m_hasher;        ///< used by the thread only, until it is joined
  std::optional<Error> m_error; ///< set by the thread, read after it is joined
  std::thread m_thread;
};

} // namespace lume_unlock::oci
