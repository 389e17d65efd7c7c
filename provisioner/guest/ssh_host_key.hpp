#pragma once

#include "util/result.hpp"

#include <libssh/libssh.h>

#include <string>

namespace lume_unlock::guest {

/// Owns a libssh key (freed with it).
struct KeyHandle {
  ssh_key key = nullptr;
  KeyHandle() = default;
  KeyHandle(const KeyHandle&) = delete;
  KeyHandle& operator=(const KeyHandle&) = delete;
  ~KeyHandle() { ssh_key_free(key); }
};

/// "SHA256:<base64>", as OpenSSH prints fingerprints; "(unknown)" when libssh cannot hash it.
std::string key_fingerprint(ssh_key key);

/// "<type> <base64>" of a public key: the line pinned in known_host and, with a comment,
/// appended to the guest's authorized_keys. An error (guest) when libssh cannot export it.
Result<std::string> public_key_line(ssh_key key);

/// The fingerprint of a pinned "<type> <base64>" line; "(unreadable pin)" when it is not one.
std::string pinned_fingerprint(const std::string& line);

} // namespace lume_unlock::guest
