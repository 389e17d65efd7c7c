#include "util/key_file.hpp"

#include "util/atomic_file.hpp"
#include "util/private_file.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

namespace lume_unlock::util {
namespace {

constexpr std::size_t max_key_file_bytes = 64 * 1024;

bool exists(const std::string& path) {
  struct stat info {};
  return lstat(path.c_str(), &info) == 0;
}

} // namespace

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
    if (exists(path)) {
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

} // namespace lume_unlock::util
