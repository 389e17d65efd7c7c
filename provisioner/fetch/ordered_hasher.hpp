#pragma once

#include "util/result.hpp"
#include "util/sha256.hpp"

#include <cstdint>
#include <string>

namespace lume_unlock::fetch {

/// The SHA-256 of a file that several connections fill out of order, computed in order off the
/// connections' path: it reads back (from the page cache, normally) the bytes between what it
/// has hashed and the contiguous prefix the writers have finished, so every byte is hashed
/// exactly once, in order, as the file holds it. One reusable 1 MiB block: memory stays flat.
class OrderedHasher {
public:
  explicit OrderedHasher(std::string path) : m_path(std::move(path)) {}
  ~OrderedHasher();
  OrderedHasher(const OrderedHasher&) = delete;
  OrderedHasher& operator=(const OrderedHasher&) = delete;

  /// Hashes up to one block more, never past `prefix` (bytes the writers have finished). True
  /// when it hashed something, so a caller can interleave other work between blocks. Fails
  /// (category failure) when the file cannot be read or is shorter than `prefix`.
  Result<bool> step(std::uint64_t prefix);
  /// step() until `prefix` is hashed.
  Status catch_up(std::uint64_t prefix);

  std::uint64_t hashed() const { return m_hasher.size(); }
  std::string finish_hex() { return m_hasher.finish_hex(); }

private:
  std::string m_path;
  int m_fd = -1;
  util::Sha256 m_hasher;
  std::string m_block;
};

} // namespace lume_unlock::fetch
