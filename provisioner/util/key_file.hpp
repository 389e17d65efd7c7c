#pragma once

#include "util/ecdsa_key.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>

namespace lume_unlock::util {

/// The environment variable that holds a private key's passphrase. Passphrases are read from the
/// environment only, never from a flag (a flag's value shows in `ps` and shell history).
inline constexpr const char* key_passphrase_variable = "LUME_UNLOCK_KEY_PASSPHRASE";

/// The passphrase from the environment; nullopt when unset or empty.
std::optional<std::string> key_passphrase_from_environment();

struct KeyPairFiles {
  std::string private_key; ///< PREFIX.key, mode 0600
  std::string public_key;  ///< PREFIX.pub, mode 0644
  std::string fingerprint; ///< "sha256:<hex>" of the public key's DER
};

/// Generates a P-256 key and writes PREFIX.key (PKCS#8 PEM, mode 0600, encrypted when a
/// passphrase is given) and PREFIX.pub (SubjectPublicKeyInfo PEM). Refuses (usage) to replace
/// either file when it exists; each file is written to a temporary name and renamed.
Result<KeyPairFiles> write_key_pair(const std::string& prefix,
                                    const std::optional<std::string>& passphrase);

/// Reads a private key file: refused unless only its owner may read it (like OpenSSH), decrypted
/// with the passphrase from the environment when it is encrypted.
Result<EcdsaPrivateKey> read_private_key_file(const std::string& path);

/// Reads a public key PEM file.
Result<EcdsaPublicKey> read_public_key_file(const std::string& path);

} // namespace lume_unlock::util
