#include "fetch/fetch.hpp"
#include "oci/registry_client.hpp"
#include "util/atomic_file.hpp"
#include "util/download.hpp"
#include "util/download_parts.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace lume_unlock::fetch {

namespace {

/// True for a URL on Hugging Face (huggingface.co, hf.co): the hosts HF_TOKEN belongs to.
bool is_hugging_face_url(const std::string& url) {
  const std::string host = util::url_host(url);
  return util::starts_with(url, "https://") && (host == "huggingface.co" || host == "hf.co");
}

Error digest_mismatch(const ArtifactSource& source,
                      const std::string& expected,
                      const std::string& actual) {
  return Error(ErrorCategory::registry,
               "the bytes of '" + describe(source) + "' do not match the expected sha256",
               "expected sha256:" + expected + ", got sha256:" + actual,
               "the source changed or was tampered with; nothing was cached. If the change is "
               "intended, update the sha256 (lume-unlock lock)");
}

void report_finished(const FetchServices& services,
                     const std::string& label,
                     std::uint64_t size,
                     const std::string& detail) {
  if (!services.progress) {
    return;
  }
  util::ProgressEvent event;
  event.step = label;
  event.done = size;
  event.total = size;
  event.unit = "bytes";
  event.detail = detail;
  event.finished = true;
  services.progress(event);
}

/// The cached blob with this digest, re-hashed so a damaged cache file is never used (it is
/// evicted and fetched again).
std::optional<FetchedArtifact> cached(BlobCache& cache, const std::string& sha256) {
  auto path = cache.find(sha256);
  if (!path) {
    return std::nullopt;
  }
  auto actual = util::sha256_file_hex(*path);
  if (!actual || actual.value() != sha256) {
    cache.evict(sha256);
    return std::nullopt;
  }
  struct stat st {};
  if (stat(path->c_str(), &st) != 0) {
    return std::nullopt;
  }
  FetchedArtifact artifact;
  artifact.path = *path;
  artifact.sha256 = sha256;
  artifact.size = static_cast<std::uint64_t>(st.st_size);
  artifact.from_cache = true;
  return artifact;
}

Result<FetchedArtifact> fetch_file(const FetchRequest& request, const FetchServices& services) {
  const std::string& path = request.source.text;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string why = stat(path.c_str(), &st) != 0 ? std::strerror(errno) : "not a file";
    return Error(ErrorCategory::usage,
                 "cannot read the artifact '" + path + "'",
                 why,
                 "a file: source names a regular file on this host");
  }
  LUME_UNLOCK_TRY_ASSIGN(std::string actual, util::sha256_file_hex(path));
  if (request.sha256 && *request.sha256 != actual) {
    return digest_mismatch(request.source, *request.sha256, actual);
  }
  FetchedArtifact artifact;
  artifact.path = path;
  artifact.sha256 = actual;
  artifact.size = static_cast<std::uint64_t>(st.st_size);
  report_finished(services, request.label, artifact.size, "host file");
  return artifact;
}

/// The partial file this process may write: the source's own (locked, resumable) or, while
/// another process holds that one, a private one removed afterwards.
struct PartialClaim {
  std::string path;
  std::optional<util::FileLock> lock;
  bool shared = true;
};

PartialClaim claim_partial(BlobCache& cache, const ArtifactSource& source) {
  PartialClaim claim;
  claim.path = cache.partial_path(source.text);
  auto lock = util::FileLock::acquire(claim.path + ".lock",
                                      "pid " + std::to_string(getpid()) + ", fetch of '" +
                                          describe(source) + "'",
                                      std::chrono::milliseconds(0));
  if (lock) {
    claim.lock.emplace(std::move(lock).value());
    return claim;
  }
  // Another process downloads the same source: do not share its file, and do not wait for it.
  claim.path += "." + util::random_hex(12);
  claim.shared = false;
  return claim;
}

/// A failed download through a mirror names the publisher's URL too: the recipe says that one.
Error mirrored(Error error, const ArtifactSource& source, const std::string& requested) {
  if (requested == source.text) {
    return error;
  }
  const std::string via = util::redact_url(requested);
  return error.with_context(describe(source) + " (through the mirror " +
                            via.substr(0, via.find('/', std::string("https://").size()) + 1) + ")");
}

util::DownloadPlan download_plan(const FetchRequest& request,
                                 const FetchServices& services,
                                 const std::string& partial_path) {
  util::DownloadPlan plan;
  plan.url = services.mirrors.apply(request.source.text);
  plan.partial_path = partial_path;
  plan.label = request.label;
  plan.retry.max_retries = request.max_retries;
  plan.retry.backoff = request.retry_backoff;
  plan.pinned = request.sha256.has_value();
  plan.stall_window = request.stall_window;
  plan.connections = request.connections;
  plan.chunk_bytes = request.chunk_bytes;
  if (is_hugging_face_url(request.source.text)) {
    plan.bearer_token = services.hugging_face_token;
    plan.denied_hint =
        services.hugging_face_token.empty()
            ? "gated and private models need a token: set HF_TOKEN to a Hugging Face access "
              "token of an account that has accepted the model's terms"
            : "the token in HF_TOKEN has no access to this repository: accept the model's terms "
              "on its Hugging Face page with that account, or use a token that has access";
  }
  return plan;
}

Result<FetchedArtifact>
fetch_oci(const FetchRequest& request, BlobCache& cache, const FetchServices& services) {
  const auto& reference = request.source.reference;
  const std::string what = "cannot fetch '" + describe(request.source) + "'";
  if (services.registry == nullptr) {
    return Error(ErrorCategory::usage, what, "no registry client is configured");
  }
  LUME_UNLOCK_TRY(cache.prepare());
  LUME_UNLOCK_TRY_ASSIGN(auto size, services.registry->stat_blob(reference, *reference.digest));
  if (!size) {
    return Error(ErrorCategory::registry,
                 what,
                 "the registry has no blob " + reference.digest->str(),
                 "push it there, or correct the digest");
  }
  oci::Descriptor blob;
  blob.media_type = "application/octet-stream";
  blob.digest = *reference.digest;
  blob.size = *size;
  // Resumable like https: the source's partial, digest and size checked before the rename.
  const auto path = cache.blob_path(reference.digest->hex());
  PartialClaim claim = claim_partial(cache, request.source);
  auto downloaded = services.registry->download_blob(reference, blob, path, claim.path);
  if (!downloaded && !claim.shared) {
    util::discard_partial(claim.path);
  }
  LUME_UNLOCK_TRY(downloaded);
  FetchedArtifact artifact;
  artifact.path = path;
  artifact.sha256 = reference.digest->hex();
  artifact.size = *size;
  artifact.network_bytes = *size;
  report_finished(services, request.label, artifact.size, "");
  return artifact;
}

Result<FetchedArtifact>
fetch_https(const FetchRequest& request, BlobCache& cache, const FetchServices& services) {
  LUME_UNLOCK_TRY(cache.prepare());
  PartialClaim claim = claim_partial(cache, request.source);
  // The other process may have committed the blob while we waited for nothing.
  if (request.sha256) {
    if (auto hit = cached(cache, *request.sha256)) {
      report_finished(services, request.label, hit->size, "cached");
      return *hit;
    }
  }
  util::DownloadPlan plan = download_plan(request, services, claim.path);

  auto outcome = util::download(services.http, plan, services.progress);
  if (!outcome) {
    if (!claim.shared) {
      util::discard_partial(claim.path);
    }
    return mirrored(outcome.error(), request.source, plan.url);
  }
  std::uint64_t network_bytes = outcome.value().network_bytes;
  if (request.sha256 && outcome.value().sha256 != *request.sha256 &&
      outcome.value().resumed_from > 0) {
    // The partial of an earlier run may hold an older version of the source: once from zero.
    util::discard_partial(claim.path);
    outcome = util::download(services.http, plan, services.progress);
    if (!outcome) {
      return mirrored(outcome.error(), request.source, plan.url);
    }
    network_bytes += outcome.value().network_bytes;
  }
  if (request.sha256 && outcome.value().sha256 != *request.sha256) {
    util::discard_partial(claim.path);
    return digest_mismatch(request.source, *request.sha256, outcome.value().sha256);
  }
  LUME_UNLOCK_TRY_ASSIGN(std::string path, cache.commit(claim.path, outcome.value().sha256));
  util::discard_partial(claim.path); // what is left beside it (the ETag of its bytes)
  FetchedArtifact artifact;
  artifact.path = path;
  artifact.sha256 = outcome.value().sha256;
  artifact.size = outcome.value().size;
  artifact.network_bytes = network_bytes;
  return artifact;
}

} // namespace

Result<std::string> hugging_face_token_from_environment() {
  const char* value = std::getenv("HF_TOKEN");
  const std::string token = value == nullptr ? "" : value;
  for (const char c : token) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return Error(ErrorCategory::usage,
                   "cannot use HF_TOKEN",
                   "it holds a space or a control character",
                   "set HF_TOKEN to the access token alone, as huggingface.co/settings/tokens "
                   "shows it");
    }
  }
  return token;
}

Result<FetchedArtifact>
fetch_artifact(const FetchRequest& request, BlobCache& cache, const FetchServices& services) {
  if (request.sha256 && !util::is_sha256_hex(*request.sha256)) {
    return Error(ErrorCategory::usage,
                 "cannot fetch '" + describe(request.source) + "'",
                 "the expected sha256 '" + *request.sha256 +
                     "' is not 64 lower-case hex characters");
  }
  if (request.source.kind == ArtifactSource::Kind::file) {
    return fetch_file(request, services);
  }
  std::optional<std::string> expected = request.sha256;
  if (request.source.kind == ArtifactSource::Kind::oci) {
    const auto& digest = request.source.reference.digest;
    if (!digest) {
      return Error(ErrorCategory::usage,
                   "cannot fetch '" + describe(request.source) + "'",
                   "the reference is not pinned by digest");
    }
    if (expected && *expected != digest->hex()) {
      return Error(ErrorCategory::usage,
                   "cannot fetch '" + describe(request.source) + "'",
                   "its sha256 " + *expected + " differs from the digest the reference pins",
                   "an oci:// source is pinned by its digest: drop sha256 or make them equal");
    }
    expected = digest->hex();
  }
  if (expected) {
    if (auto hit = cached(cache, *expected)) {
      report_finished(services, request.label, hit->size, "cached");
      return *hit;
    }
  }
  if (request.source.kind == ArtifactSource::Kind::oci) {
    return fetch_oci(request, cache, services);
  }
  return fetch_https(request, cache, services);
}

std::optional<AdvertisedDigest> read_advertised_digest(const util::HttpResponse& response) {
  std::string etag = response.header("X-Linked-Etag").value_or("");
  if (util::starts_with(etag, "W/")) {
    etag.erase(0, 2);
  }
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  const auto size = util::parse_decimal(response.header("X-Linked-Size").value_or(""));
  // Files stored without LFS carry a git blob id (40 hex) there: not a SHA-256 of the bytes.
  if (!util::is_sha256_hex(etag) || !size) {
    return std::nullopt;
  }
  return AdvertisedDigest{etag, *size};
}

std::optional<AdvertisedDigest> advertised_digest(const ArtifactSource& source,
                                                  const FetchServices& services) {
  if (source.kind != ArtifactSource::Kind::https) {
    return std::nullopt;
  }
  util::HttpRequest request{"HEAD", services.mirrors.apply(source.text)};
  request.https_only = true;
  request.follow_redirects = false;
  if (is_hugging_face_url(source.text)) {
    request.bearer_token = services.hugging_face_token;
  }
  auto response = services.http.send(request);
  if (!response || response.value().status < 200 || response.value().status >= 400) {
    return std::nullopt;
  }
  return read_advertised_digest(response.value());
}

} // namespace lume_unlock::fetch
