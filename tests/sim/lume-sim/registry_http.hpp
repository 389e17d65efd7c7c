#pragma once

// What lume-sim's pull (registry_pull.cpp) and push (registry_push.cpp) share: Lume's media
// types, SHA-256 digests, and the registry session (client, token, Authorization header).

#include "registry_io.hpp"

#include <httplib.h>
#include <openssl/evp.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace lume_sim {

// Media types and annotation keys of Lume's OCI format (lume-oci.md §3.1), spelled out here
// rather than taken from provisioner/oci so the simulator stays independent of our client.
inline const char* const k_manifest_type = "application/vnd.oci.image.manifest.v1+json";
inline const char* const k_config_type = "application/vnd.trycua.lume.config.v1+json";
inline const char* const k_nvram_type = "application/vnd.trycua.lume.nvram.v1";
inline const char* const k_disk_type = "application/vnd.trycua.lume.disk.v1";
inline const char* const k_manifest_failure = "Failed to fetch image manifest from registry.";

class Sha256 {
public:
  Sha256() : m_ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    EVP_DigestInit_ex(m_ctx.get(), EVP_sha256(), nullptr);
  }
  void update(const char* data, std::size_t size) { EVP_DigestUpdate(m_ctx.get(), data, size); }
  std::string finish() {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(m_ctx.get(), out, &n);
    static const char* k_hex = "0123456789abcdef";
    std::string hex;
    for (unsigned int i = 0; i < n; ++i) {
      hex.push_back(k_hex[out[i] >> 4]);
      hex.push_back(k_hex[out[i] & 15]);
    }
    return "sha256:" + hex;
  }

private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> m_ctx;
};

std::string digest_of(const std::string& bytes);

/// One httplib client per operation (Lume: one URLSession per pull/push), TLS verified like
/// URLSession does against the keychain; here against --registry-ca.
std::unique_ptr<httplib::Client> client_for(const RegistryEndpoint& registry);

/// getToken (§2.1): the hard-coded /token realm; any failure means anonymous for pulls.
std::string token_for(httplib::Client& c,
                      const RegistryEndpoint& registry,
                      const std::string& repository,
                      const std::string& scopes,
                      const std::optional<std::pair<std::string, std::string>>& credentials);

/// `headers` with "Authorization: Bearer TOKEN" when there is a token (or `always`).
httplib::Headers with_auth(httplib::Headers headers, const std::string& token, bool always);

} // namespace lume_sim
