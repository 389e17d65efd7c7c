#include "util/ecdsa_key.hpp"

#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace lume_unlock::util {

namespace {

using KeyPtr = std::shared_ptr<EVP_PKEY>;

KeyPtr own(EVP_PKEY* key) {
  return KeyPtr(key, EVP_PKEY_free);
}

/// The oldest error OpenSSL queued, as text, and the queue emptied (so the next call starts clean).
std::string openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) {
    return "OpenSSL gave no reason";
  }
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

BioPtr memory_bio(std::string_view bytes) {
  return BioPtr(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
}

std::string drain(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size));
}

/// Only P-256 is accepted: the one scheme cosign's specification requires of every verifier.
bool is_p256(EVP_PKEY* key) {
  if (EVP_PKEY_is_a(key, "EC") != 1) {
    return false;
  }
  char group[64] = {};
  std::size_t length = 0;
  if (EVP_PKEY_get_utf8_string_param(
          key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &length) != 1) {
    return false;
  }
  return std::strcmp(group, "prime256v1") == 0 || std::strcmp(group, "P-256") == 0;
}

Error not_p256(const std::string& source, const std::string& kind) {
  return Error(ErrorCategory::usage,
               kind + " " + source,
               "is not an ECDSA P-256 key",
               "create one with: lume-unlock key generate PREFIX");
}

struct PassphraseInput {
  const std::optional<std::string>* passphrase;
  bool asked = false;
};

int passphrase_callback(char* buffer, int size, int /*rwflag*/, void* user) {
  auto* input = static_cast<PassphraseInput*>(user);
  input->asked = true;
  if (!input->passphrase->has_value()) {
    return -1;
  }
  const std::string& text = **input->passphrase;
  if (text.size() > static_cast<std::size_t>(size)) {
    return -1;
  }
  std::memcpy(buffer, text.data(), text.size());
  return static_cast<int>(text.size());
}

/// The labels of the PEM blocks in `pem` ("PRIVATE KEY" for "-----BEGIN PRIVATE KEY-----"), in
/// order, so a file is judged by every block it holds and not only by the first OpenSSL reads.
std::vector<std::string> pem_labels(std::string_view pem) {
  static constexpr std::string_view k_begin = "-----BEGIN ";
  std::vector<std::string> labels;
  std::size_t at = pem.find(k_begin);
  while (at != std::string_view::npos) {
    const std::size_t start = at + k_begin.size();
    const std::size_t end = pem.find("-----", start);
    if (end == std::string_view::npos) {
      break;
    }
    labels.emplace_back(pem.substr(start, end - start));
    at = pem.find(k_begin, end);
  }
  return labels;
}

constexpr std::size_t max_key_file_bytes = 64 * 1024;

} // namespace

Result<EcdsaPublicKey> EcdsaPublicKey::from_pem(std::string_view pem, const std::string& source) {
  ERR_clear_error();
  // OpenSSL reads the first block and ignores the rest: a second key would be half-read.
  if (const auto labels = pem_labels(pem); labels.size() > 1) {
    return Error(ErrorCategory::usage,
                 "public key " + source,
                 "holds " + std::to_string(labels.size()) +
                     " PEM blocks; a public key file holds exactly one key",
                 "put each key in its own .pub file (a recipe's trust.keys lists several)");
  }
  BioPtr bio = memory_bio(pem);
  KeyPtr key = own(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!key) {
    return Error(ErrorCategory::usage,
                 "public key " + source,
                 "is not a PEM public key (-----BEGIN PUBLIC KEY-----): " + openssl_reason(),
                 "use the .pub file written by 'lume-unlock key generate' or cosign");
  }
  if (!is_p256(key.get())) {
    return not_p256(source, "public key");
  }
  return EcdsaPublicKey(std::move(key));
}

std::string EcdsaPublicKey::pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PUBKEY(bio.get(), m_key.get());
  return drain(bio.get());
}

std::string EcdsaPublicKey::der() const {
  unsigned char* bytes = nullptr;
  const int size = i2d_PUBKEY(m_key.get(), &bytes);
  if (size <= 0) {
    return {};
  }
  std::string out(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(size));
  OPENSSL_free(bytes);
  return out;
}

std::string EcdsaPublicKey::fingerprint() const {
  return "sha256:" + sha256_hex(der());
}

bool EcdsaPublicKey::verify(std::string_view message, std::string_view der_signature) const {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  const bool valid =
      context &&
      EVP_DigestVerifyInit(context.get(), nullptr, EVP_sha256(), nullptr, m_key.get()) == 1 &&
      EVP_DigestVerify(context.get(),
                       reinterpret_cast<const unsigned char*>(der_signature.data()),
                       der_signature.size(),
                       reinterpret_cast<const unsigned char*>(message.data()),
                       message.size()) == 1;
  ERR_clear_error();
  return valid;
}

Result<EcdsaPrivateKey> EcdsaPrivateKey::generate() {
  ERR_clear_error();
  KeyPtr key = own(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) {
    return Error(ErrorCategory::failure, "generating an ECDSA P-256 key", openssl_reason());
  }
  return EcdsaPrivateKey(std::move(key));
}

Result<EcdsaPrivateKey> EcdsaPrivateKey::from_pem(std::string_view pem,
                                                  const std::optional<std::string>& passphrase,
                                                  const std::string& source) {
  ERR_clear_error();
  const bool encrypted =
      pem.find("-----BEGIN ENCRYPTED PRIVATE KEY-----") != std::string_view::npos;
  if (pem.find("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----") != std::string_view::npos ||
      pem.find("-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----") != std::string_view::npos) {
    return Error(ErrorCategory::usage,
                 "private key " + source,
                 "is in cosign's own encrypted format, which only cosign reads",
                 "use a key from 'lume-unlock key generate', or export a PKCS#8 key from your "
                 "KMS/HSM tooling");
  }
  // Only PKCS#8, what 'key generate' writes: one format to document and to test. SEC1
  // ("EC PRIVATE KEY") was read silently before although the help said PKCS#8 (issue 27).
  const auto labels = pem_labels(pem);
  if (labels.size() > 1) {
    return Error(ErrorCategory::usage,
                 "private key " + source,
                 "holds " + std::to_string(labels.size()) +
                     " PEM blocks; a private key file holds exactly one key",
                 "put the signing key alone in its file");
  }
  if (labels.size() == 1 && labels[0] != "PRIVATE KEY" && labels[0] != "ENCRYPTED PRIVATE KEY") {
    const std::string convert =
        labels[0] == "EC PRIVATE KEY"
            ? "convert it with: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.p8 (or without "
              "-nocrypt to encrypt it), or create one with: lume-unlock key generate PREFIX"
            : "create one with: lume-unlock key generate PREFIX";
    return Error(ErrorCategory::usage,
                 "private key " + source,
                 "is a '" + labels[0] +
                     "' PEM block; sign takes a PKCS#8 P-256 key (-----BEGIN PRIVATE KEY----- "
                     "or -----BEGIN ENCRYPTED PRIVATE KEY-----)",
                 convert);
  }
  if (encrypted && !passphrase.has_value()) {
    return Error(ErrorCategory::usage,
                 "private key " + source,
                 "is encrypted and no passphrase was given",
                 "set LUME_UNLOCK_KEY_PASSPHRASE in the environment");
  }
  BioPtr bio = memory_bio(pem);
  PassphraseInput input{&passphrase};
  KeyPtr key = own(PEM_read_bio_PrivateKey(bio.get(), nullptr, passphrase_callback, &input));
  if (!key) {
    const std::string reason = openssl_reason();
    if (encrypted) {
      return Error(ErrorCategory::usage,
                   "private key " + source,
                   "could not be decrypted: the passphrase is wrong (" + reason + ")",
                   "check LUME_UNLOCK_KEY_PASSPHRASE");
    }
    return Error(ErrorCategory::usage,
                 "private key " + source,
                 "is not a PKCS#8 PEM private key: " + reason,
                 "create one with: lume-unlock key generate PREFIX");
  }
  if (!is_p256(key.get())) {
    return not_p256(source, "private key");
  }
  return EcdsaPrivateKey(std::move(key));
}

Result<std::string> EcdsaPrivateKey::pem(const std::optional<std::string>& passphrase) const {
  ERR_clear_error();
  BioPtr bio(BIO_new(BIO_s_mem()));
  const int written =
      PEM_write_bio_PKCS8PrivateKey(bio.get(),
                                    m_key.get(),
                                    passphrase ? EVP_aes_256_cbc() : nullptr,
                                    passphrase ? passphrase->data() : nullptr,
                                    passphrase ? static_cast<int>(passphrase->size()) : 0,
                                    nullptr,
                                    nullptr);
  if (written != 1) {
    return Error(ErrorCategory::failure, "encoding the private key", openssl_reason());
  }
  return drain(bio.get());
}

EcdsaPublicKey EcdsaPrivateKey::public_key() const {
  // The private EVP_PKEY also answers public-key operations; re-reading the DER gives an object
  // that holds the public half only.
  const std::string der = EcdsaPublicKey(m_key).der();
  const auto* cursor = reinterpret_cast<const unsigned char*>(der.data());
  return EcdsaPublicKey(own(d2i_PUBKEY(nullptr, &cursor, static_cast<long>(der.size()))));
}

Result<std::string> EcdsaPrivateKey::sign(std::string_view message) const {
  ERR_clear_error();
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  // EVP_PKEY_get_size: the longest signature this key makes (a DER signature varies in length).
  std::string signature(static_cast<std::size_t>(EVP_PKEY_get_size(m_key.get())), '\0');
  std::size_t size = signature.size();
  if (!context ||
      EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, m_key.get()) != 1 ||
      EVP_DigestSign(context.get(),
                     reinterpret_cast<unsigned char*>(signature.data()),
                     &size,
                     reinterpret_cast<const unsigned char*>(message.data()),
                     message.size()) != 1) {
    return Error(ErrorCategory::failure, "signing", openssl_reason());
  }
  signature.resize(size);
  return signature;
}

std::optional<std::string> key_passphrase_from_environment() {
  const char* value = std::getenv(key_passphrase_variable);
  if (value == nullptr || *value == '\0') {
    return std::nullopt;
  }
  return std::string(value);
}

Result<KeyPairFiles> write_key_pair(const std::string& prefix,
                                    const std::optional<std::string>& passphrase) {
  if (prefix.empty()) {
    return Error(ErrorCategory::usage,
                 "key generate",
                 "the PREFIX is empty",
                 "name the files, e.g.: lume-unlock key generate signing");
  }
  // A prefix names a file: "DIR/" or an existing directory would write hidden DIR/.key.
  struct stat info {};
  if (prefix.back() == '/' || (::stat(prefix.c_str(), &info) == 0 && S_ISDIR(info.st_mode))) {
    return Error(ErrorCategory::usage,
                 "key generate '" + prefix + "'",
                 "the PREFIX names a directory; it must name a file (PREFIX.key and PREFIX.pub)",
                 "add a file name, e.g.: lume-unlock key generate " +
                     (prefix.back() == '/' ? prefix : prefix + "/") + "signing");
  }
  KeyPairFiles files{prefix + ".key", prefix + ".pub", {}};
  for (const std::string& path : {files.private_key, files.public_key}) {
    if (path_exists(path)) {
      return Error(ErrorCategory::usage,
                   "key generate '" + prefix + "'",
                   "'" + path + "' already exists; a key is never overwritten",
                   "choose another PREFIX, or move the old key away first");
    }
  }
  LUME_UNLOCK_TRY_ASSIGN(EcdsaPrivateKey key, EcdsaPrivateKey::generate());
  LUME_UNLOCK_TRY_ASSIGN(std::string private_pem, key.pem(passphrase));
  const EcdsaPublicKey public_key = key.public_key();
  LUME_UNLOCK_TRY(write_file_atomic(files.private_key, private_pem, 0600));
  if (Status written = write_file_atomic(files.public_key, public_key.pem(), 0644); !written) {
    std::remove(files.private_key.c_str()); // no half a pair
    return written.error();
  }
  files.fingerprint = public_key.fingerprint();
  return files;
}

Result<EcdsaPrivateKey> read_private_key_file(const std::string& path) {
  LUME_UNLOCK_TRY(require_owner_only(path, "signing key"));
  LUME_UNLOCK_TRY_ASSIGN(std::string pem,
                         read_input_file(path, max_key_file_bytes, "the signing key"));
  return EcdsaPrivateKey::from_pem(pem, key_passphrase_from_environment(), "'" + path + "'");
}

Result<EcdsaPublicKey> read_public_key_file(const std::string& path) {
  LUME_UNLOCK_TRY_ASSIGN(std::string pem,
                         read_input_file(path, max_key_file_bytes, "the public key"));
  return EcdsaPublicKey::from_pem(pem, "'" + path + "'");
}

Status require_owner_only(const std::string& path, const std::string& what) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    return Error(
        ErrorCategory::failure, "cannot examine " + what + " '" + path + "'", std::strerror(errno));
  }
  const unsigned mode = info.st_mode & 07777;
  if ((mode & 077) != 0) {
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", mode);
    return Error(ErrorCategory::usage,
                 what + " '" + path + "'",
                 std::string("has mode ") + octal +
                     ": other users may read it, so it is refused (OpenSSH refuses such keys too)",
                 "run: chmod 600 '" + path + "'");
  }
  return ok_status();
}

} // namespace lume_unlock::util
