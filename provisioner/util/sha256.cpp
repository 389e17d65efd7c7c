#include "sha256.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace lume_unlock::util {

struct Sha256::Context {
  EVP_MD_CTX* ctx = nullptr;
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : m_context(std::make_unique<Context>()) {
  m_context->ctx = EVP_MD_CTX_new();
  if (m_context->ctx == nullptr || EVP_DigestInit_ex(m_context->ctx, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL could not initialise SHA-256");
  }
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, std::size_t size) {
  if (size == 0) {
    return;
  }
  if (EVP_DigestUpdate(m_context->ctx, data, size) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 update failed");
  }
  m_size += size;
}

std::string Sha256::finish_hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(m_context->ctx, digest, &length) != 1) {
    throw std::runtime_error("OpenSSL SHA-256 finish failed");
  }
  static const char k_hex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(k_hex[digest[i] >> 4]);
    hex.push_back(k_hex[digest[i] & 0x0f]);
  }
  return hex;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 hasher;
  hasher.update(bytes);
  return hasher.finish_hex();
}

Result<std::string> sha256_file_hex(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return Error(ErrorCategory::failure, "cannot read '" + path + "'", std::strerror(errno));
  }
  Sha256 hasher;
  std::vector<char> buffer(1 << 20);
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), file)) > 0) {
    hasher.update(buffer.data(), n);
  }
  const bool failed = std::ferror(file) != 0;
  const int saved_errno = errno;
  std::fclose(file);
  if (failed) {
    return Error(ErrorCategory::failure, "cannot read '" + path + "'", std::strerror(saved_errno));
  }
  return hasher.finish_hex();
}

bool is_sha256_hex(std::string_view text) {
  if (text.size() != 64) {
    return false;
  }
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

} // namespace lume_unlock::util
