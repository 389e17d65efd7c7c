#pragma once
// ECDSA P-256 keys and signatures over SHA-256, all through OpenSSL's EVP interface. The formats
// are the ones cosign reads: PKCS#8 PEM private keys, SubjectPublicKeyInfo PEM public keys, DER
// (ASN.1 SEQUENCE{r,s}) signatures.
struct evp_pkey_st;

#include "util/result.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::util {

/// A P-256 public key. Copies share the OpenSSL object (immutable once loaded).
class EcdsaPublicKey {
public:
  /// Parses a "-----BEGIN PUBLIC KEY-----" PEM. `source` names it in errors (a path, "the
  /// recipe's trust block"). Fails (usage) when it is not PEM or not an EC P-256 key.
  static Result<EcdsaPublicKey> from_pem(std::string_view pem, const std::string& source);

  /// SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----").
  std::string pem() const;
  /// SubjectPublicKeyInfo DER bytes.
  std::string der() const;
  /// "sha256:<hex>" of der(): how records and lock files name the key.
  std::string fingerprint() const;

  /// True when `der_signature` is a valid ECDSA-SHA256 signature of `message` by this key.
  /// Malformed signatures are simply not valid.
  bool verify(std::string_view message, std::string_view der_signature) const;

private:
  explicit EcdsaPublicKey(std::shared_ptr<evp_pkey_st> key) : m_key(std::move(key)) {}
  std::shared_ptr<evp_pkey_st> m_key;
  friend class EcdsaPrivateKey;
};

/// A P-256 private key.
class EcdsaPrivateKey {
public:
  /// A fresh key from OpenSSL's random generator.
  static Result<EcdsaPrivateKey> generate();
  /// Parses a PKCS#8 PEM ("PRIVATE KEY", or "ENCRYPTED PRIVATE KEY" with `passphrase`). Fails
  /// (usage) naming `source` when the PEM is not a P-256 key, when it is encrypted and no
  /// passphrase was given, or when the passphrase is wrong. The passphrase never appears in errors.
  static Result<EcdsaPrivateKey> from_pem(std::string_view pem,
                                          const std::optional<std::string>& passphrase,
                                          const std::string& source);

  /// PKCS#8 PEM; encrypted (PBES2, AES-256-CBC) when a passphrase is given.
  Result<std::string> pem(const std::optional<std::string>& passphrase) const;
  EcdsaPublicKey public_key() const;

  /// DER ECDSA signature over SHA-256 of `message`.
  Result<std::string> sign(std::string_view message) const;

private:
  explicit EcdsaPrivateKey(std::shared_ptr<evp_pkey_st> key) : m_key(std::move(key)) {}
  std::shared_ptr<evp_pkey_st> m_key;
};

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

/// Checks that a secret file (a private key, a credential file) is readable by its owner only,
/// as OpenSSH demands of keys. Fails with a usage error (exit 2) naming `what`, the mode found and
/// the `chmod 600` to run when group or others may read or write it, and with the errno text
/// when the file cannot be examined.
Status require_owner_only(const std::string& path, const std::string& what);

} // namespace lume_unlock::util
