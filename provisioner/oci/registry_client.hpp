#pragma once

#include "oci/credentials.hpp"
#include "oci/digest.hpp"
#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "util/http_client.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"
#include "util/retry_policy.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::oci {

struct RegistryClientOptions {
  /// Hosts ("host" or "host:port") reached over plain HTTP (--insecure-registry). Every other
  /// host, loopback included, uses https with TLS verification on.
  std::vector<std::string> insecure_registries;
  /// PEM file of the certificate authorities that sign registry certificates (--registry-ca,
  /// the recipe's registry options, SSL_CERT_FILE); empty means the system store.
  std::string ca_file;
  /// Where credentials come from; null means anonymous only.
  std::shared_ptr<const CredentialSource> credentials;
  /// Manifests larger than this are refused (go-containerregistry and distribution use 4 MiB).
  std::uint64_t max_manifest_bytes = 4 * 1024 * 1024;
  /// Blobs larger than this are uploaded in PATCH chunks of upload_chunk_size.
  std::uint64_t chunked_upload_threshold = 512ull * 1024 * 1024;
  std::uint64_t upload_chunk_size = 128ull * 1024 * 1024;
  /// Retries of idempotent requests (GET, HEAD, manifest PUT) on 5xx/429/timeouts.
  util::RetryPolicy retry{2};
  /// Connections at once for a blob where the registry accepts ranges (util::download).
  unsigned download_connections = 4;
  /// Byte progress of blob transfers (step "download blob" / "upload blob").
  util::ProgressCallback progress;
};

/// What a manifest HEAD reports. The digest is the registry's claim (HEAD has no body to
/// hash); get_manifest() is the verified path.
struct ManifestHead {
  Digest digest = Digest::of_bytes("");
  std::string media_type;
  std::uint64_t size = 0;
};

/// An OCI distribution client over util::HttpClient: token/Basic auth from the registry's
/// challenge, manifests verified against their bytes, blobs streamed to files with digest and
/// size checked while streaming, uploads as POST + PUT (or PATCH chunks). Every failure is an
/// Error of category registry (exit 4) naming the reference; tokens never appear in errors.
/// Not thread-safe (one HTTP connection, reused).
class RegistryClient {
public:
  explicit RegistryClient(RegistryClientOptions options = {});
  ~RegistryClient();
  RegistryClient(RegistryClient&&) noexcept;
  RegistryClient& operator=(RegistryClient&&) noexcept;

  /// "http://HOST" for --insecure-registry hosts, else "https://HOST".
  std::string base_url(const std::string& registry) const;

  /// HEAD of a manifest: the registry's digest claim, media type and size.
  Result<ManifestHead> head_manifest(const Reference& ref);
  /// The same, with nullopt when the registry does not have it (404): for watching a tag.
  Result<std::optional<ManifestHead>> find_manifest(const Reference& ref);

  /// GET of a manifest with the full Accept list. The digest is computed from the bytes; it
  /// must equal Docker-Content-Digest when sent, and the requested digest for a by-digest
  /// reference. Bodies over max_manifest_bytes are refused.
  Result<FetchedManifest> get_manifest(const Reference& ref);

  /// Size of a blob when the registry has it, nullopt when it does not (404).
  Result<std::optional<std::uint64_t>> stat_blob(const Reference& repository, const Digest& digest);

  /// Downloads a blob with util::download into `partial` (PATH.partial when empty): ranged and
  /// resumable, over several connections where the registry accepts ranges; renamed to `path`
  /// only when size and digest match `blob`. On failure nothing is left at `path` (an existing
  /// file stays untouched); an interrupted partial stays for the next call to resume, a wrong
  /// one is removed.
  Status download_blob(const Reference& repository,
                       const Descriptor& blob,
                       const std::string& path,
                       const std::string& partial = {});

  /// Uploads a file as a blob in one pass over the file, then cross-checks it with a HEAD.
  /// With `known_digest`: skipped when the registry already has it, else POST + one streamed
  /// PUT (PATCH chunks above chunked_upload_threshold); the registry checks the digest. Without:
  /// POST, PATCH (chunks above the threshold) hashed while sending, then PUT with the computed
  /// digest (no skip: the digest is only known at the end).
  Result<Descriptor> push_blob_file(const Reference& repository,
                                    const std::string& path,
                                    const std::string& media_type,
                                    std::optional<Digest> known_digest = std::nullopt);
  /// Same for bytes in memory (configs, small layers).
  Result<Descriptor> push_blob_bytes(const Reference& repository,
                                     std::string_view bytes,
                                     const std::string& media_type);

  /// PUTs manifest bytes under ref's tag (or digest). Returns the digest of `bytes`, after
  /// checking it against the registry's Docker-Content-Digest.
  Result<Digest>
  push_manifest(const Reference& ref, const std::string& bytes, const std::string& media_type);

  /// HTTP requests sent so far (statistics, tests).
  std::uint64_t request_count() const;

  struct Impl;

private:
  std::unique_ptr<Impl> m_impl;
};

} // namespace lume_unlock::oci
