#pragma once

#include "result.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace lume_unlock::util {

/// Streaming SHA-256 over OpenSSL's EVP interface. Feed bytes with update(), then call
/// finish_hex() once; the object cannot be reused afterwards.
class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, std::size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  /// Bytes hashed so far.
  std::uint64_t size() const { return m_size; }
  /// The digest as 64 lower-case hex characters.
  std::string finish_hex();

private:
  struct Context;
  std::unique_ptr<Context> m_context;
  std::uint64_t m_size = 0;
};

/// SHA-256 of a byte string, as 64 lower-case hex characters.
std::string sha256_hex(std::string_view bytes);

/// SHA-256 of a file's contents, read in 1 MiB blocks. Fails with the path and errno text.
Result<std::string> sha256_file_hex(const std::string& path);

/// True when `text` is exactly 64 lower-case hex characters.
bool is_sha256_hex(std::string_view text);

} // namespace lume_unlock::util
