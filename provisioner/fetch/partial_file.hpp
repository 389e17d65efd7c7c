#pragma once

#include "util/result.hpp"
#include "util/sha256.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace lume_unlock::fetch {

/// The file a download grows, open for appending, with the SHA-256 of every byte it holds: an
/// existing file is re-hashed when opened, so a resumed download still hashes the whole file in
/// order. Writes go out in 1 MiB blocks.
class PartialFile {
public:
  PartialFile() = default;
  ~PartialFile();
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;

  /// Opens (creating when missing, never following a link) and hashes what is there.
  Status open_and_rehash(const std::string& path);
  /// Empties the file and the hash.
  Status truncate();
  /// Hashes and buffers; writes a block when the buffer is full.
  Status append(std::string_view chunk);
  Status flush();

  std::uint64_t size() const { return m_hasher.size(); }
  std::string finish_hex() { return m_hasher.finish_hex(); }

private:
  Error io_error(const char* action, int err) const;

  std::string m_path;
  int m_fd = -1;
  util::Sha256 m_hasher;
  std::string m_buffer;
};

} // namespace lume_unlock::fetch
