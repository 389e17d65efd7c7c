#pragma once

#include "fetch/artifact_source.hpp"
#include "fetch/blob_cache.hpp"
#include "util/http_client.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace lume_unlock::oci {
class RegistryClient;
}

namespace lume_unlock::fetch {

struct FetchRequest {
  ArtifactSource source;
  /// Expected SHA-256 (64 lower-case hex); nullopt for an unpinned item (`lume-unlock lock`
  /// learns the digest this way).
  std::optional<std::string> sha256;
  /// The progress step ("llama.cpp", "model.gguf").
  std::string label;
  /// Attempts after a dropped connection within one call, each resuming where the last stopped.
  unsigned max_retries = 3;
  /// Pause before retry n is n times this.
  std::chrono::milliseconds retry_backoff{200};
  /// A connection below 1 KiB/s for this long is dropped and resumed (a retry).
  std::chrono::seconds stall_window{60};
  /// Connections at once where the server accepts ranges (GitHub's and Hugging Face's CDNs do):
  /// a CDN paces each connection, and one TCP stream over a long round trip rarely fills the
  /// path. 1 for one stream.
  unsigned connections = 4;
  /// The ranges those connections take in file order, so the in-order hash trails them closely;
  /// files under two chunks come as one stream.
  std::uint64_t chunk_bytes = 16u << 20;
};

struct FetchedArtifact {
  /// The verified bytes: a blob in the cache, or the host file itself for a file source.
  std::string path;
  std::string sha256;
  std::uint64_t size = 0;
  /// Response body bytes received from the network by this call (0 for a cache hit or a file).
  std::uint64_t network_bytes = 0;
  bool from_cache = false;
};

struct FetchServices {
  util::HttpClient& http;
  /// For oci:// sources; null when none is configured (such a source then fails, usage).
  oci::RegistryClient* registry = nullptr;
  util::ProgressCallback progress;
  /// Where https sources are really requested (LUME_UNLOCK_MIRROR, HF_ENDPOINT, --mirror).
  MirrorMap mirrors;
  /// HF_TOKEN: sent to sources on Hugging Face (or where the mirror map sends them), never to
  /// a host a redirect leads to; empty for none.
  std::string hugging_face_token;
};

/// True for a URL on Hugging Face (huggingface.co, hf.co): the hosts HF_TOKEN belongs to.
bool is_hugging_face_url(const std::string& url);

/// HF_TOKEN (Hugging Face's own convention), empty when unset. A value holding a space or a
/// control character is a usage error that never shows the value.
Result<std::string> hugging_face_token_from_environment();

/// Brings one artifact's bytes to the host, verified:
/// - expected digest already cached (and still hashing to its name): no request at all;
/// - https: GET through `services.http` (redirects followed, https only) of the URL after
///   `services.mirrors` (the cache and the messages keep the publisher's), streamed to the
///   source's partial file while hashing, resumed with "Range: bytes=N-" from a partial left by
///   this or an earlier run (a 200, a 416 or a Content-Range not starting at N restarts from
///   zero), retried up to `max_retries` times after a dropped connection; where the server
///   accepts ranges, a file of two chunks or more comes over `connections` connections at once
///   (util/download.hpp), hashed in order off their path; committed to the cache
///   only when the digest matches (or, unpinned, under the digest it has);
/// - oci: oci::RegistryClient::download_blob, the same engine with the registry's auth, into the
///   source's partial (resumed like https), renamed into the cache when digest and size match;
/// - file: hashed in place, not copied.
/// Fails with category registry (exit 4) when the bytes do not match: the message names the
/// source (redacted), the expected and the actual sha256; the partial is removed and the cache
/// is left as it was. HTTP statuses and transport failures after the retries are category
/// registry too; a missing file source and a bad expected digest are usage.
/// Progress: step = label, done/total in bytes (total when the server says), a few events a
/// second at most, then a finished event.
Result<FetchedArtifact>
fetch_artifact(const FetchRequest& request, BlobCache& cache, const FetchServices& services);

/// What a publisher says of a file before sending it.
struct AdvertisedDigest {
  std::string sha256; ///< 64 lower-case hex
  std::uint64_t size = 0;
};

/// Reads X-Linked-Etag (the SHA-256 in quotes) and X-Linked-Size: Hugging Face's resolve
/// redirect carries both (docs/sources.md). nullopt unless both are there and well-formed.
std::optional<AdvertisedDigest> read_advertised_digest(const util::HttpResponse& response);

/// One HEAD of an https source (through the mirror map, HF_TOKEN for Hugging Face, redirects not
/// followed: the resolver answers, the CDN is not asked): the digest and size its publisher
/// advertises, so `lock` pins a 7 GB model without downloading it. nullopt when the source
/// advertises none or the request fails (the caller downloads instead; a fetch always verifies
/// the bytes against the pin).
std::optional<AdvertisedDigest> advertised_digest(const ArtifactSource& source,
                                                  const FetchServices& services);

} // namespace lume_unlock::fetch
