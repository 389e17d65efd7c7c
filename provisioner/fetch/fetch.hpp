#pragma once

#include "oci/reference.hpp"
#include "util/archive.hpp"
#include "util/http_client.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::oci {
class RegistryClient;
}

namespace lume_unlock::fetch {

/// Where the bytes of one artifact come from (a recipe's install item, issue 24).
struct ArtifactSource {
  enum class Kind { https, oci, file };
  Kind kind = Kind::https;
  /// The https URL as written, the OCI reference without its scheme
  /// ("REGISTRY/REPO@sha256:<hex>") or the resolved host path.
  std::string text;
  /// For Kind::oci: the parsed reference, always pinned by digest.
  oci::Reference reference;

  friend bool operator==(const ArtifactSource& a, const ArtifactSource& b) {
    return a.kind == b.kind && a.text == b.text;
  }
};

/// Longest source text accepted; real release and model-hub URLs stay far below it.
constexpr std::size_t k_max_source_length = 2048;

/// Parses an `https://HOST/PATH` URL. Fails (category usage) with a message that a recipe parser
/// can prefix with "file:line:col: install[0].url: ": empty, longer than k_max_source_length,
/// whitespace or control characters, `http://` (TLS only), any other or no scheme, no host, and
/// user information ("user:password@"; credentials never belong in a recipe; the message shows
/// the URL with them removed).
Result<ArtifactSource> parse_https_source(std::string_view url);

/// Parses `oci://REGISTRY/REPO@sha256:<hex>`, a blob pinned by digest. A tag (with or without a
/// digest) is refused: the artifact must not move under the recipe. Fails like
/// parse_https_source.
Result<ArtifactSource> parse_oci_source(std::string_view text);

/// What a recipe's `url:` field holds: dispatches on the scheme to parse_oci_source for
/// `oci://` and to parse_https_source for everything else (which refuses what is not https).
Result<ArtifactSource> parse_url_source(std::string_view url);

/// A host file (already resolved by the caller, e.g. relative to the recipe). Not checked here:
/// fetch_artifact reports a missing or unreadable file.
ArtifactSource file_source(std::string path);

/// The source for messages and records: the URL redacted (util::redact_url), "oci://<ref>", or
/// the host path.
std::string describe(const ArtifactSource& source);

/// Where to fetch an https source from instead of its publisher, for air-gapped and proxied
/// sites: rules "FROM=TO", each FROM an https URL prefix ("https://github.com/") and TO the
/// prefix that replaces it ("https://mirror.example/github/"). The recipe, the pinned digests,
/// the cache key and the provenance keep the publisher's URL; only the request goes elsewhere,
/// and the bytes are verified the same way.
class MirrorMap {
public:
  struct Rule {
    std::string from;
    std::string to;
  };

  /// Rules from `LUME_UNLOCK_MIRROR` (whitespace-separated FROM=TO rules) and `HF_ENDPOINT`
  /// (Hugging Face's own variable: https://huggingface.co/ → its value), then `extra` (the
  /// --mirror options). Fails (usage) naming the variable or option and the rule.
  static Result<MirrorMap> from_environment(const std::vector<std::string>& extra = {});

  /// Adds one "FROM=TO" rule; `origin` names where it came from in errors. Both sides must be
  /// https:// URLs with a host and end in '/', so a rule never splices a host name.
  Status add(std::string_view rule, const std::string& origin);

  /// `url` with the longest matching FROM replaced by its TO; `url` itself when none matches.
  std::string apply(const std::string& url) const;

  const std::vector<Rule>& rules() const { return m_rules; }

private:
  std::vector<Rule> m_rules;
};

/// What default_root() reads, passed in so the choice can be tested on any platform.
struct CacheEnvironment {
  std::optional<std::string> lume_unlock_cache_dir; ///< $LUME_UNLOCK_CACHE_DIR
  std::optional<std::string> xdg_cache_home;        ///< $XDG_CACHE_HOME
  std::optional<std::string> home;                  ///< $HOME
  bool macos = false;
};

/// The content-addressed cache of fetched artifacts:
///   <root>/blobs/sha256/<hex>    verified bytes, named by their SHA-256, never written in place
///   <root>/partial/<key>         a download in progress (key = SHA-256 of the source), kept
///                                across runs so an interrupted one resumes
///   <root>/partial/<key>.lock    held (util::FileLock) by the process writing that partial
/// A blob appears only by rename after its digest matched, so a reader never sees half a file;
/// two processes committing the same blob rename identical bytes, which is harmless.
class BlobCache {
public:
  explicit BlobCache(std::string root);

  /// $LUME_UNLOCK_CACHE_DIR when set and not empty; else on macOS ~/Library/Caches/lume-unlock;
  /// elsewhere $XDG_CACHE_HOME/lume-unlock (when absolute) or ~/.cache/lume-unlock. Fails
  /// (category usage) when none can be formed (no HOME), with a hint naming
  /// LUME_UNLOCK_CACHE_DIR.
  static Result<std::string> root_for(const CacheEnvironment& environment);
  /// root_for() of this process's environment and platform.
  static Result<std::string> default_root();

  const std::string& root() const { return m_root; }
  /// <root>/blobs/sha256/<hex> (whether or not it exists).
  std::string blob_path(std::string_view sha256_hex) const;
  /// <root>/partial/<key> for a source key (fetch uses describe() of the source): the same
  /// source always maps to the same partial file.
  std::string partial_path(std::string_view source_key) const;

  /// The path of the blob with this digest when the cache has it as a regular file. Does not
  /// re-hash it (fetch_artifact does).
  std::optional<std::string> find(std::string_view sha256_hex) const;

  /// Creates <root>/blobs/sha256 and <root>/partial. Fails with the path and errno text.
  Status prepare() const;

  /// Moves `file` (on the cache's file system, normally a partial) to blob_path(sha256_hex) by
  /// rename (not fsynced: every use re-hashes a blob); mode 0644. The caller has checked the
  /// digest. Returns the blob path. Fails (category failure) with both paths and errno text.
  Result<std::string> commit(const std::string& file, std::string_view sha256_hex) const;

  /// Removes the blob with this digest (a cached file that no longer hashes to its name).
  void evict(std::string_view sha256_hex) const;

private:
  std::string m_root;
};

/// How an artifact becomes files (a recipe's `unpack:`).
enum class UnpackFormat { none, zip, tar_gz };

/// "zip" | "tar.gz" | "none". Fails (category usage) naming the value, the accepted ones and a
/// did-you-mean when one is close.
Result<UnpackFormat> parse_unpack_format(std::string_view text);
/// The recipe spelling of a format.
const char* format_name(UnpackFormat format);

/// One file of an unpacked artifact.
struct UnpackedFile {
  /// Path below the install destination ("bin/llama-server"); empty for UnpackFormat::none,
  /// where the one file is the destination itself.
  std::string relative_path;
  /// Where it is on the host, inside the staging directory.
  std::string host_path;
  std::string sha256; ///< empty for a symbolic link
  std::uint64_t size = 0;
  bool executable = false;
  /// The link's target (relative, inside the tree) when this entry is a symbolic link; empty
  /// for a regular file.
  std::string symlink_target;
};

/// Unpacks the artifact at `blob_path` into `staging_dir`, which must not exist yet (it appears
/// whole, or not at all), and lists every regular file and symbolic link in it, sorted by
/// relative path. zip and tar.gz go through util::safe_extract (its rules and `limits` apply;
/// refusals are category verification), dropping `strip_components` leading path components
/// (a directory with no more components is skipped; a file or link with no more is refused,
/// so nothing is lost silently). none hard-links the blob (or copies it across file systems)
/// to `<staging_dir>/<file name of blob_path>`; strip_components must then be 0 (usage).
/// Staging files may be hard links to cache blobs: read them, never write them.
/// `known_sha256` (unpack none only): the blob's digest as fetch_artifact verified it, so a
/// multi-gigabyte model is not read once more to list it; empty: it is hashed.
Result<std::vector<UnpackedFile>> unpack_artifact(const std::string& blob_path,
                                                  UnpackFormat format,
                                                  unsigned strip_components,
                                                  const std::string& staging_dir,
                                                  const util::ExtractLimits& limits = {},
                                                  const std::string& known_sha256 = {});

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
