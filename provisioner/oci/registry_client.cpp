#include "oci/registry_client.hpp"

#include "oci/auth_challenge.hpp"
#include "oci/media_types.hpp"
#include "oci/registry_error.hpp"
#include "util/atomic_file.hpp"
#include "util/base64.hpp"
#include "util/json_parse.hpp"
#include "util/percent_encode.hpp"
#include "util/sha256.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <thread>

namespace lume_unlock::oci {

namespace {

using util::HttpRequest;
using util::HttpResponse;

constexpr std::size_t k_error_body_keep = 4096;
constexpr std::size_t k_write_buffer = 1 << 20;
constexpr std::uint64_t k_progress_step = 8ull << 20;

std::string host_without_port(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    return std::string(host.substr(0, host.find(']') + 1));
  }
  return std::string(host.substr(0, host.find(':')));
}

std::string strip_parameters(const std::string& content_type) {
  std::string out = content_type.substr(0, content_type.find(';'));
  while (!out.empty() && out.back() == ' ') {
    out.pop_back();
  }
  return out;
}

std::string with_query(const std::string& url, const std::string& parameter) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + parameter;
}

/// A byte source that can be read at any offset (retries, PATCH chunks).
struct UploadSource {
  std::uint64_t size = 0;
  std::function<Result<std::size_t>(std::uint64_t offset, char* buffer, std::size_t capacity)>
      read_at;
};

/// Where a request goes and with which scope it authenticates.
struct Target {
  const Reference* ref;
  bool push;
};

} // namespace

struct RegistryClient::Impl {
  RegistryClientOptions options;
  util::HttpClient http;
  /// "registry|repository|actions" -> Authorization header value. Never printed.
  std::map<std::string, std::string> authorization;

  explicit Impl(RegistryClientOptions o) : options(std::move(o)), http(http_options(options)) {}

  static util::HttpClientOptions http_options(const RegistryClientOptions& options) {
    util::HttpClientOptions http;
    http.ca_file = options.ca_file;
    return http;
  }

  bool plain_http(const std::string& registry) const {
    for (const auto& host : options.insecure_registries) {
      if (host == registry || host == host_without_port(registry)) {
        return true;
      }
    }
    return false;
  }

  std::string base_url(const std::string& registry) const {
    return (plain_http(registry) ? "http://" : "https://") + registry;
  }

  std::string repository_url(const Reference& ref) const {
    return base_url(ref.registry) + "/v2/" + ref.repository;
  }

  static std::string scope_key(const Target& t) {
    return t.ref->registry + "|" + t.ref->repository + "|" + (t.push ? "pull,push" : "pull");
  }

  /// Sends with auth, answering one 401 challenge, and retries idempotent requests on
  /// temporary failures. `reset` runs before every attempt (fresh sinks and readers).
  Result<HttpResponse> send(const Target& target,
                            HttpRequest request,
                            bool idempotent,
                            const std::string& what_failed,
                            const std::function<Status()>& reset = {}) {
    const std::string method = request.method;
    const std::string url = request.url;
    bool authenticated_now = false;
    int attempt = 0;
    while (true) {
      ++attempt;
      if (reset) {
        LUME_UNLOCK_TRY(reset());
      }
      HttpRequest r = request;
      auto auth = authorization.find(scope_key(target));
      // Credentials go only to the registry itself, never to a redirect or upload host elsewhere.
      if (auth != authorization.end() && util::url_host(r.url) == target.ref->registry) {
        r.headers.push_back({"Authorization", auth->second});
      }
      auto response = http.send(r);
      if (!response) {
        const auto kind = response.error().kind;
        const bool retryable = kind == util::TransportError::Kind::timeout ||
                               kind == util::TransportError::Kind::other;
        if (idempotent && retryable && attempt < options.max_attempts) {
          std::this_thread::sleep_for(options.retry_delay * attempt);
          continue;
        }
        return transport_error(what_failed, method, url, response.error(), options.ca_file);
      }
      HttpResponse& got = response.value();
      if (got.status == 401 && !authenticated_now) {
        auto header = got.header("WWW-Authenticate");
        auto challenge = header ? parse_auth_challenge(*header) : std::nullopt;
        if (!challenge || (challenge->scheme != "bearer" && challenge->scheme != "basic")) {
          return Error(ErrorCategory::registry,
                       what_failed,
                       method + " " + util::redact_url(url) +
                           " answered HTTP 401 without a usable WWW-Authenticate challenge",
                       "the registry requires authentication it does not describe; check the "
                       "registry URL");
        }
        LUME_UNLOCK_TRY(authenticate(target, *challenge, what_failed));
        authenticated_now = true;
        --attempt; // answering the challenge is not a failed attempt
        continue;
      }
      if (idempotent && (got.status == 429 || got.status >= 500) &&
          attempt < options.max_attempts) {
        std::this_thread::sleep_for(options.retry_delay * attempt);
        continue;
      }
      return std::move(got);
    }
  }

  Status authenticate(const Target& target,
                      const AuthChallenge& challenge,
                      const std::string& what_failed) {
    std::optional<Credentials> credentials;
    if (options.credentials) {
      credentials = options.credentials->lookup(target.ref->registry);
    }
    if (challenge.scheme == "basic") {
      if (!credentials) {
        return Error(ErrorCategory::registry,
                     what_failed,
                     "the registry '" + target.ref->registry + "' requires a username and password",
                     "add the registry to the 'auths' of your Docker config.json");
      }
      authorization[scope_key(target)] =
          "Basic " + util::base64_encode(credentials->username + ":" + credentials->secret);
      return ok_status();
    }
    auto realm = challenge.param("realm");
    if (!realm || realm->empty()) {
      return Error(ErrorCategory::registry,
                   what_failed,
                   "the registry's Bearer challenge names no realm",
                   "check the registry URL");
    }
    std::string token_url = *realm;
    std::string query;
    if (auto service = challenge.param("service")) {
      query += "service=" + util::percent_encode(*service, "/:,");
    }
    const std::string scope =
        "repository:" + target.ref->repository + ":" + (target.push ? "pull,push" : "pull");
    query +=
        (query.empty() ? "" : "&") + std::string("scope=") + util::percent_encode(scope, "/:,");
    token_url = with_query(token_url, query);

    HttpRequest request{"GET", token_url};
    request.headers.push_back({"Accept", "application/json"});
    // A token document is a few KiB (a JWT and its lifetime); a larger one is not a token.
    request.max_body_bytes = 1u << 20;
    const bool realm_is_safe = token_url.rfind("https://", 0) == 0 ||
                               util::is_loopback_url(token_url) ||
                               plain_http(util::url_host(token_url));
    if (credentials && realm_is_safe) {
      request.headers.push_back(
          {"Authorization",
           "Basic " + util::base64_encode(credentials->username + ":" + credentials->secret)});
    }
    auto response = http.send(request);
    const std::string token_failed =
        what_failed + ": token request to '" + util::redact_url(*realm) + "'";
    if (!response) {
      return transport_error(token_failed, "GET", token_url, response.error(), options.ca_file);
    }
    if (response.value().status != 200) {
      return make_http_error("GET", token_url, response.value()).to_error(token_failed);
    }
    auto json = util::parse_json(response.value().body).value;
    std::string token;
    if (json.is_object()) {
      for (const char* key : {"token", "access_token"}) {
        if (json.contains(key) && json[key].is_string() && !json[key].get<std::string>().empty()) {
          token = json[key].get<std::string>();
          break;
        }
      }
    }
    if (token.empty()) {
      return Error(ErrorCategory::registry,
                   token_failed,
                   "the answer has no 'token' or 'access_token'",
                   "check the registry URL");
    }
    authorization[scope_key(target)] = "Bearer " + token;
    return ok_status();
  }

  void report(const std::string& step, std::uint64_t done, std::uint64_t total, bool finished) {
    if (options.progress) {
      util::ProgressEvent event;
      event.step = step;
      event.done = done;
      event.total = total;
      event.unit = "bytes";
      event.finished = finished;
      options.progress(event);
    }
  }

  Result<Descriptor> push_blob(const Reference& repo,
                               const UploadSource& source,
                               const std::string& media_type,
                               const std::optional<Digest>& known_digest);
};

RegistryClient::RegistryClient(RegistryClientOptions options)
    : m_impl(std::make_unique<Impl>(std::move(options))) {}
RegistryClient::~RegistryClient() = default;
RegistryClient::RegistryClient(RegistryClient&&) noexcept = default;
RegistryClient& RegistryClient::operator=(RegistryClient&&) noexcept = default;

std::string RegistryClient::base_url(const std::string& registry) const {
  return m_impl->base_url(registry);
}

std::uint64_t RegistryClient::request_count() const {
  return m_impl->http.request_count();
}

Result<ManifestHead> RegistryClient::head_manifest(const Reference& ref) {
  LUME_UNLOCK_TRY_ASSIGN(auto found, find_manifest(ref));
  if (!found) {
    const std::string url = m_impl->repository_url(ref) + "/manifests/" + ref.identifier();
    return Error(ErrorCategory::registry,
                 "cannot check manifest '" + ref.str() + "'",
                 "HEAD " + util::redact_url(url) +
                     " answered HTTP 404: the registry has no such manifest",
                 "check the reference (repository and tag or digest)");
  }
  return *found;
}

Result<std::optional<ManifestHead>> RegistryClient::find_manifest(const Reference& ref) {
  const std::string what = "cannot check manifest '" + ref.str() + "'";
  HttpRequest request{"HEAD", m_impl->repository_url(ref) + "/manifests/" + ref.identifier()};
  request.headers.push_back({"Accept", manifest_accept});
  LUME_UNLOCK_TRY_ASSIGN(auto response, m_impl->send({&ref, false}, request, true, what));
  const auto& got = response;
  if (got.status == 404) {
    return std::optional<ManifestHead>();
  }
  if (got.status != 200) {
    return make_http_error("HEAD", request.url, got).to_error(what);
  }
  auto header = got.header("Docker-Content-Digest");
  if (!header) {
    return Error(ErrorCategory::registry,
                 what,
                 "the registry sent no Docker-Content-Digest",
                 "use 'lume-unlock resolve', which hashes the manifest itself");
  }
  auto digest = Digest::parse(*header);
  if (!digest) {
    return Error(ErrorCategory::registry,
                 what,
                 "the registry's Docker-Content-Digest is invalid: " + digest.error().why());
  }
  ManifestHead head;
  head.digest = digest.value();
  head.media_type = strip_parameters(got.header("Content-Type").value_or(""));
  head.size = std::strtoull(got.header("Content-Length").value_or("0").c_str(), nullptr, 10);
  return std::optional<ManifestHead>(head);
}

Result<FetchedManifest> RegistryClient::get_manifest(const Reference& ref) {
  const std::string what = "cannot get manifest '" + ref.str() + "'";
  const std::uint64_t limit = m_impl->options.max_manifest_bytes;
  HttpRequest request{"GET", m_impl->repository_url(ref) + "/manifests/" + ref.identifier()};
  request.headers.push_back({"Accept", manifest_accept});
  std::string body;
  bool too_large = false;
  request.body_sink = [&](std::string_view chunk) {
    if (body.size() + chunk.size() > limit) {
      too_large = true;
      return false;
    }
    body.append(chunk);
    return true;
  };
  request.sink_success_only = true;
  auto reset = [&]() -> Status {
    body.clear();
    too_large = false;
    return ok_status();
  };
  auto response = m_impl->send({&ref, false}, request, true, what, reset);
  if (too_large) {
    return Error(ErrorCategory::registry,
                 what,
                 "the manifest is larger than the " + std::to_string(limit) + "-byte limit",
                 "check the reference: a Lume image manifest is a few kilobytes");
  }
  if (!response) {
    return response.error();
  }
  const auto& got = response.value();
  if (got.status != 200) {
    return make_http_error("GET", request.url, got).to_error(what);
  }
  FetchedManifest fetched;
  fetched.digest = Digest::of_bytes(body);
  if (ref.digest && fetched.digest != *ref.digest) {
    return Error(ErrorCategory::registry,
                 what,
                 "the received bytes hash to '" + fetched.digest.str() + "', not the requested '" +
                     ref.digest->str() + "'",
                 "the registry or a proxy returned the wrong content; do not use this image");
  }
  if (auto header = got.header("Docker-Content-Digest")) {
    auto claimed = Digest::parse(*header);
    if (!claimed || claimed.value() != fetched.digest) {
      return Error(ErrorCategory::registry,
                   what,
                   "the registry's Docker-Content-Digest '" + *header +
                       "' does not match the digest of the received bytes '" +
                       fetched.digest.str() + "'",
                   "the registry or a proxy returned inconsistent content; retry, and do not use "
                   "this image if it persists");
    }
  }
  auto parsed = parse_manifest(body);
  if (!parsed) {
    return Error(ErrorCategory::registry, what, parsed.error().why());
  }
  fetched.manifest = std::move(parsed).value();
  fetched.media_type = strip_parameters(got.header("Content-Type").value_or(""));
  if (fetched.media_type.empty() || fetched.media_type == "application/json") {
    fetched.media_type = fetched.manifest.media_type;
  }
  fetched.bytes = std::move(body);
  return fetched;
}

Result<std::optional<std::uint64_t>> RegistryClient::stat_blob(const Reference& repository,
                                                               const Digest& digest) {
  const std::string what =
      "cannot check blob '" + digest.str() + "' in '" + repository.repository_path() + "'";
  HttpRequest request{"HEAD", m_impl->repository_url(repository) + "/blobs/" + digest.str()};
  request.follow_redirects = true;
  LUME_UNLOCK_TRY_ASSIGN(auto response, m_impl->send({&repository, false}, request, true, what));
  const auto& got = response;
  if (got.status == 404) {
    return std::optional<std::uint64_t>();
  }
  if (got.status != 200) {
    return make_http_error("HEAD", request.url, got).to_error(what);
  }
  return std::optional<std::uint64_t>(
      std::strtoull(got.header("Content-Length").value_or("0").c_str(), nullptr, 10));
}

Status RegistryClient::download_blob(const Reference& repository,
                                     const Descriptor& blob,
                                     const std::string& path) {
  const std::string what =
      "cannot download blob '" + blob.digest.str() + "' of '" + repository.repository_path() + "'";
  HttpRequest request{"GET", m_impl->repository_url(repository) + "/blobs/" + blob.digest.str()};
  request.follow_redirects = true; // ghcr.io answers with a redirect to its blob storage
  request.timeout = std::chrono::milliseconds(0); // big blobs: only the stall limit applies
  request.sink_success_only = true;

  std::optional<util::AtomicFile> file;
  util::Sha256 hasher;
  std::uint64_t received = 0;
  std::uint64_t next_report = k_progress_step;
  bool too_large = false;
  std::optional<Error> write_error;
  std::string buffer;
  buffer.reserve(k_write_buffer);

  auto flush = [&]() -> bool {
    if (buffer.empty()) {
      return true;
    }
    auto written = file->write(buffer);
    buffer.clear();
    if (!written) {
      write_error = written.error();
      return false;
    }
    return true;
  };
  request.body_sink = [&](std::string_view chunk) {
    received += chunk.size();
    if (received > blob.size) {
      too_large = true;
      return false;
    }
    hasher.update(chunk);
    buffer.append(chunk);
    if (buffer.size() >= k_write_buffer && !flush()) {
      return false;
    }
    if (received >= next_report) {
      m_impl->report("download blob", received, blob.size, false);
      next_report += k_progress_step;
    }
    return true;
  };
  auto reset = [&]() -> Status {
    file.reset(); // an earlier attempt's temporary file is removed here
    auto created = util::AtomicFile::create(path);
    if (!created) {
      return created.error().with_context(what);
    }
    file.emplace(std::move(created).value());
    hasher = util::Sha256();
    received = 0;
    next_report = k_progress_step;
    too_large = false;
    write_error.reset();
    buffer.clear();
    return ok_status();
  };

  auto response = m_impl->send({&repository, false}, request, true, what, reset);
  if (too_large) {
    return Error(ErrorCategory::registry,
                 what,
                 "the registry sent more than the " + std::to_string(blob.size) +
                     " bytes the descriptor states",
                 "the image is inconsistent; do not use it");
  }
  if (write_error) {
    return write_error->with_context(what);
  }
  if (!response) {
    return response.error();
  }
  if (response.value().status != 200) {
    return make_http_error("GET", request.url, response.value()).to_error(what);
  }
  if (!flush()) {
    return write_error->with_context(what);
  }
  if (received != blob.size) {
    return Error(ErrorCategory::registry,
                 what,
                 "received " + std::to_string(received) + " bytes, the descriptor states " +
                     std::to_string(blob.size),
                 "the transfer was cut short or the image is inconsistent; retry the command");
  }
  const std::string actual = "sha256:" + hasher.finish_hex();
  if (actual != blob.digest.str()) {
    return Error(ErrorCategory::registry,
                 what,
                 "the received bytes hash to '" + actual + "', not the requested '" +
                     blob.digest.str() + "'",
                 "the registry or a proxy returned the wrong content; do not use this image");
  }
  if (auto committed = file->commit(); !committed) {
    return committed.error().with_context(what);
  }
  m_impl->report("download blob", received, blob.size, true);
  return ok_status();
}

Result<Descriptor> RegistryClient::Impl::push_blob(const Reference& repo,
                                                   const UploadSource& source,
                                                   const std::string& media_type,
                                                   const std::optional<Digest>& known_digest) {
  // Named by digest when it is known up front, else by repository only until it is computed.
  std::string what = known_digest ? "cannot upload blob '" + known_digest->str() + "' to '" +
                                        repo.repository_path() + "'"
                                  : "cannot upload a blob to '" + repo.repository_path() + "'";
  Descriptor descriptor;
  descriptor.media_type = media_type;
  descriptor.size = source.size;
  const Target target{&repo, true};

  // Skip what the registry already has (same digest and size).
  if (known_digest) {
    descriptor.digest = *known_digest;
    HttpRequest head{"HEAD", repository_url(repo) + "/blobs/" + known_digest->str()};
    LUME_UNLOCK_TRY_ASSIGN(auto response, send(target, head, true, what));
    if (response.status == 200 &&
        response.header("Content-Length") == std::to_string(source.size)) {
      return descriptor;
    }
  }

  HttpRequest start{"POST", repository_url(repo) + "/blobs/uploads/"};
  LUME_UNLOCK_TRY_ASSIGN(auto started, send(target, start, false, what));
  if (started.status != 202) {
    return make_http_error("POST", start.url, started).to_error(what);
  }
  auto resolve_location = [&](const HttpResponse& response,
                              const std::string& method,
                              const std::string& url) -> Result<std::string> {
    auto location = response.header("Location");
    if (!location || location->empty()) {
      return Error(ErrorCategory::registry,
                   what,
                   method + " " + util::redact_url(url) + " answered without a Location header");
    }
    if (location->rfind("http://", 0) == 0 || location->rfind("https://", 0) == 0) {
      return *location;
    }
    return base_url(repo.registry) + (location->front() == '/' ? "" : "/") + *location;
  };
  LUME_UNLOCK_TRY_ASSIGN(auto location, resolve_location(started, "POST", start.url));
  std::string upload_url = location;

  // The bytes are hashed as they are sent (one pass over the file). A resend after a 401
  // re-reads a range already hashed; `hashed` keeps each byte from being hashed twice.
  util::Sha256 hasher;
  std::uint64_t hashed = 0;
  // A monolithic PUT with a known digest is checked by the registry; no need to hash here.
  const bool monolithic = known_digest && source.size <= options.chunked_upload_threshold;
  std::optional<Error> read_error;
  auto make_request = [&](const std::string& method,
                          const std::string& url,
                          std::uint64_t begin,
                          std::uint64_t end,
                          std::uint64_t* position) {
    HttpRequest r{method, url};
    r.timeout = std::chrono::milliseconds(0);
    r.headers.push_back({"Content-Type", media_type::octet_stream});
    r.body_size = end - begin;
    r.body_reader = [&, begin, end, position](char* buffer, std::size_t capacity) -> std::size_t {
      const std::uint64_t at = begin + *position;
      if (at >= end) {
        return 0;
      }
      auto n = source.read_at(
          at, buffer, static_cast<std::size_t>(std::min<std::uint64_t>(capacity, end - at)));
      if (!n) {
        read_error = n.error();
        return HttpRequest::abort_upload;
      }
      if (!monolithic && at + n.value() > hashed) {
        const std::uint64_t skip = hashed > at ? hashed - at : 0;
        hasher.update(buffer + skip, n.value() - skip);
        hashed = at + n.value();
      }
      *position += n.value();
      if (at / k_progress_step != (at + n.value()) / k_progress_step) {
        report("upload blob", at + n.value(), source.size, false);
      }
      return n.value();
    };
    return r;
  };
  std::uint64_t position = 0;
  auto rewind = [&]() -> Status {
    position = 0;
    return ok_status();
  };
  auto check_sent = [&]() -> Status {
    if (read_error) {
      return read_error->with_context(what);
    }
    return ok_status();
  };

  HttpRequest finish;
  if (monolithic) {
    // Monolithic: POST, then one PUT carrying the whole body and the digest.
    finish = make_request(
        "PUT",
        with_query(upload_url, "digest=" + util::percent_encode(known_digest->str(), "/:,")),
        0,
        source.size,
        &position);
  } else {
    // PATCH chunks (one chunk when the digest is unknown and the blob is small), then a PUT
    // with the digest computed while sending.
    const std::uint64_t chunk = source.size > options.chunked_upload_threshold
                                    ? options.upload_chunk_size
                                    : std::max<std::uint64_t>(source.size, 1);
    for (std::uint64_t offset = 0; offset < source.size;) {
      const std::uint64_t end = std::min(source.size, offset + chunk);
      position = 0;
      HttpRequest patch = make_request("PATCH", upload_url, offset, end, &position);
      patch.headers.push_back(
          {"Content-Range", std::to_string(offset) + "-" + std::to_string(end - 1)});
      auto response = send(target, patch, false, what, rewind);
      LUME_UNLOCK_TRY(check_sent());
      if (!response) {
        return response.error();
      }
      if (response.value().status != 202) {
        return make_http_error("PATCH", upload_url, response.value()).to_error(what);
      }
      LUME_UNLOCK_TRY_ASSIGN(auto next, resolve_location(response.value(), "PATCH", upload_url));
      upload_url = next;
      offset = end;
    }
    const Digest computed = Digest::from_sha256_hex(hasher.finish_hex()).value();
    if (known_digest && computed != *known_digest) {
      return Error(ErrorCategory::failure,
                   what,
                   "the bytes sent hash to '" + computed.str() + "', not the expected '" +
                       known_digest->str() + "' (did the file change during the upload?)");
    }
    descriptor.digest = computed;
    what = "cannot upload blob '" + computed.str() + "' to '" + repo.repository_path() + "'";
    finish = HttpRequest{
        "PUT", with_query(upload_url, "digest=" + util::percent_encode(computed.str(), "/:,"))};
    finish.headers.push_back({"Content-Type", media_type::octet_stream});
  }
  position = 0;
  auto finished = send(target, finish, false, what, rewind);
  LUME_UNLOCK_TRY(check_sent());
  if (!finished) {
    return finished.error();
  }
  if (finished.value().status != 201) {
    return make_http_error("PUT", finish.url, finished.value()).to_error(what);
  }
  if (auto header = finished.value().header("Docker-Content-Digest");
      header && *header != descriptor.digest.str()) {
    return Error(ErrorCategory::registry,
                 what,
                 "the registry stored digest '" + *header + "', the uploaded bytes have '" +
                     descriptor.digest.str() + "'");
  }
  // Cross-check: the registry must now serve the blob with the uploaded size.
  HttpRequest check{"HEAD", repository_url(repo) + "/blobs/" + descriptor.digest.str()};
  LUME_UNLOCK_TRY_ASSIGN(auto checked, send(target, check, true, what));
  if (checked.status != 200 || checked.header("Content-Length") != std::to_string(source.size)) {
    return Error(ErrorCategory::registry,
                 what,
                 "after the upload, HEAD answered HTTP " + std::to_string(checked.status) +
                     " with size " + checked.header("Content-Length").value_or("none") +
                     " instead of 200 with size " + std::to_string(source.size));
  }
  report("upload blob", source.size, source.size, true);
  return descriptor;
}

Result<Descriptor> RegistryClient::push_blob_file(const Reference& repository,
                                                  const std::string& path,
                                                  const std::string& media_type,
                                                  std::optional<Digest> known_digest) {
  const std::string what = "cannot upload '" + path + "' to '" + repository.repository_path() + "'";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error(ErrorCategory::failure, what, std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    return Error(ErrorCategory::failure, what, std::strerror(errno));
  }
  UploadSource source;
  source.size = static_cast<std::uint64_t>(st.st_size);
  source.read_at =
      [fd, path](std::uint64_t offset, char* buffer, std::size_t capacity) -> Result<std::size_t> {
    while (true) {
      ssize_t n = ::pread(fd, buffer, capacity, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0) {
        return Error(ErrorCategory::failure, "cannot read '" + path + "'", std::strerror(errno));
      }
      if (n == 0 && capacity > 0) {
        return Error(ErrorCategory::failure,
                     "cannot read '" + path + "'",
                     "the file shrank while it was being uploaded");
      }
      return static_cast<std::size_t>(n);
    }
  };
  return m_impl->push_blob(repository, source, media_type, known_digest);
}

Result<Descriptor> RegistryClient::push_blob_bytes(const Reference& repository,
                                                   std::string_view bytes,
                                                   const std::string& media_type) {
  UploadSource source;
  source.size = bytes.size();
  source.read_at =
      [bytes](std::uint64_t offset, char* buffer, std::size_t capacity) -> Result<std::size_t> {
    std::size_t n =
        std::min<std::size_t>(capacity, bytes.size() - static_cast<std::size_t>(offset));
    std::copy_n(bytes.data() + offset, n, buffer);
    return n;
  };
  return m_impl->push_blob(repository, source, media_type, Digest::of_bytes(bytes));
}

Result<Digest> RegistryClient::push_manifest(const Reference& ref,
                                             const std::string& bytes,
                                             const std::string& media_type) {
  const std::string what = "cannot push manifest '" + ref.str() + "'";
  const Digest digest = Digest::of_bytes(bytes);
  if (ref.digest && *ref.digest != digest) {
    return Error(ErrorCategory::usage,
                 what,
                 "the manifest bytes have digest '" + digest.str() + "', the reference names '" +
                     ref.digest->str() + "'");
  }
  if (bytes.size() > m_impl->options.max_manifest_bytes) {
    return Error(ErrorCategory::usage,
                 what,
                 "the manifest is larger than the " +
                     std::to_string(m_impl->options.max_manifest_bytes) + "-byte limit");
  }
  HttpRequest request{"PUT", m_impl->repository_url(ref) + "/manifests/" + ref.identifier()};
  request.headers.push_back({"Content-Type", media_type});
  request.body = bytes;
  LUME_UNLOCK_TRY_ASSIGN(auto response, m_impl->send({&ref, true}, request, true, what));
  if (response.status != 201) {
    return make_http_error("PUT", request.url, response).to_error(what);
  }
  if (auto header = response.header("Docker-Content-Digest"); header && *header != digest.str()) {
    return Error(ErrorCategory::registry,
                 what,
                 "the registry's Docker-Content-Digest '" + *header +
                     "' does not match the digest of the pushed bytes '" + digest.str() + "'");
  }
  return digest;
}

} // namespace lume_unlock::oci
