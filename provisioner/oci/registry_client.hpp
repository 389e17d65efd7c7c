#pragma once

#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "util/http_client.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"
#include "util/retry_policy.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::oci {

/// A username and secret (password or token) for one registry. Never printed or logged.
struct Credentials {
  std::string username;
  std::string secret;
};

/// Where registry credentials come from (environment, Docker config, ...).
class CredentialSource {
public:
  virtual ~CredentialSource() = default;
  /// Credentials for `registry` ("ghcr.io", "127.0.0.1:5000"), or nullopt for anonymous.
  virtual std::optional<Credentials> lookup(const std::string& registry) const = 0;
};

/// Reads an environment variable; injectable for tests.
using EnvironmentReader = std::function<std::optional<std::string>(const std::string& name)>;
EnvironmentReader process_environment();

/// GHCR_USERNAME or GITHUB_USERNAME plus GHCR_TOKEN or GITHUB_TOKEN (the names Lume reads),
/// for ghcr.io only: a GitHub token is never sent to any other host.
class EnvironmentCredentials : public CredentialSource {
public:
  explicit EnvironmentCredentials(EnvironmentReader env = process_environment());
  std::optional<Credentials> lookup(const std::string& registry) const override;

private:
  EnvironmentReader m_env;
};

/// The `auths` of a Docker config.json: `{"auths": {"HOST": {"auth": base64(user:secret)}}}` or
/// `{"username": ..., "password": ...}`. Keys may carry a scheme or path
/// ("https://ghcr.io/v1/"). Credential helpers (credsStore, credHelpers) are not consulted.
class DockerConfigCredentials : public CredentialSource {
public:
  /// Parses config.json text; fails (category usage) naming `path` when it is not valid.
  static Result<DockerConfigCredentials> parse(const std::string& text, const std::string& path);
  /// Reads $DOCKER_CONFIG/config.json, else ~/.docker/config.json; a missing file means no
  /// credentials, an unreadable or invalid one is an error.
  static Result<DockerConfigCredentials> load(const EnvironmentReader& env = process_environment());

  std::optional<Credentials> lookup(const std::string& registry) const override;

private:
  std::vector<std::pair<std::string, Credentials>> m_entries; ///< normalized host -> credentials
};

/// Asks each source in order; the first answer wins.
class ChainedCredentials : public CredentialSource {
public:
  explicit ChainedCredentials(std::vector<std::shared_ptr<const CredentialSource>> sources);
  std::optional<Credentials> lookup(const std::string& registry) const override;

private:
  std::vector<std::shared_ptr<const CredentialSource>> m_sources;
};

/// The default order: environment, then Docker config. Fails only on an invalid config.json.
Result<std::shared_ptr<const CredentialSource>>
default_credentials(const EnvironmentReader& env = process_environment());

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
