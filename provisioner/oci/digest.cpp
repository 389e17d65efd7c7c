#include "oci/digest.hpp"

#include "util/sha256.hpp"

namespace lume_unlock::oci {

namespace {

Error invalid(std::string_view text, const std::string& why) {
  return Error(ErrorCategory::usage,
               "invalid digest '" + std::string(text) + "'",
               why,
               "a digest is 'sha256:' followed by 64 lower-case hex characters");
}

bool is_lower_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

} // namespace

Result<Digest> Digest::parse(std::string_view text) {
  if (text.empty()) {
    return invalid(text, "the digest is empty");
  }
  auto colon = text.find(':');
  if (colon == std::string_view::npos) {
    return invalid(text, "missing the algorithm prefix 'sha256:'");
  }
  std::string_view algorithm = text.substr(0, colon);
  if (algorithm != "sha256") {
    return invalid(text, "unsupported algorithm '" + std::string(algorithm) + "' (only sha256)");
  }
  std::string_view hex = text.substr(colon + 1);
  if (hex.size() != 64) {
    return invalid(text,
                   "expected 64 hex characters after 'sha256:', got " + std::to_string(hex.size()));
  }
  for (char c : hex) {
    if (!is_lower_hex(c)) {
      return invalid(text, "the hex part may only contain lower-case hex characters [0-9a-f]");
    }
  }
  return Digest(std::string(hex));
}

Digest Digest::of_bytes(std::string_view bytes) {
  return Digest(util::sha256_hex(bytes));
}

Result<Digest> Digest::from_sha256_hex(std::string_view hex) {
  return parse("sha256:" + std::string(hex));
}

} // namespace lume_unlock::oci
