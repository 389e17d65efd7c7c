#pragma once

#include "util/result.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

// ECDSA P-256 keys and signatures over SHA-256, all through OpenSSL's EVP interface. The formats
// are the ones cosign reads: PKCS#8 PEM private keys, SubjectPublicKeyInfo PEM public keys, DER
// (ASN.1 SEQUENCE{r,s}) signatures.

struct evp_pkey_st;

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

} // namespace lume_unlock::util
