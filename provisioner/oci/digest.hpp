#pragma once

#include "util/result.hpp"

#include <string>
#include <string_view>

namespace lume_unlock::oci {

/// A content digest: algorithm sha256 and 64 lower-case hex characters. Valid by construction:
/// the only ways to get one are parse() and of_bytes()/from_sha256_hex(), which check.
class Digest {
public:
  /// Parses "sha256:<64 lower-case hex>". Fails (category usage) naming the input and the rule.
  static Result<Digest> parse(std::string_view text);
  /// The digest of a byte string.
  static Digest of_bytes(std::string_view bytes);
  /// Wraps 64 lower-case hex characters (e.g. from util::Sha256); fails like parse().
  static Result<Digest> from_sha256_hex(std::string_view hex);

  static constexpr const char* algorithm() { return "sha256"; }
  const std::string& hex() const { return m_hex; }
  /// "sha256:<hex>".
  std::string str() const { return std::string(algorithm()) + ":" + m_hex; }

  friend bool operator==(const Digest& a, const Digest& b) { return a.m_hex == b.m_hex; }
  friend bool operator!=(const Digest& a, const Digest& b) { return !(a == b); }
  friend bool operator<(const Digest& a, const Digest& b) { return a.m_hex < b.m_hex; }

private:
  explicit Digest(std::string hex) : m_hex(std::move(hex)) {}
  std::string m_hex;
};

} // namespace lume_unlock::oci
