#include "oci/manifest.hpp"
#include "oci/registry_client.hpp"
#include "oci/registry_session.hpp"
#include "util/download.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

namespace lume_unlock::oci {

RegistryClient::RegistryClient(RegistryClientOptions options)
    : m_impl(std::make_unique<Impl>(std::move(options))) {}
RegistryClient::~RegistryClient() = default;
RegistryClient::RegistryClient(RegistryClient&&) noexcept = default;
RegistryClient& RegistryClient::operator=(RegistryClient&&) noexcept = default;

std::string RegistryClient::base_url(const std::string& registry) const {
  return m_impl->session.base_url(registry);
}

std::uint64_t RegistryClient::request_count() const {
  return m_impl->session.request_count();
}

Result<ManifestHead> RegistryClient::head_manifest(const Reference& ref) {
  LUME_UNLOCK_TRY_ASSIGN(auto found, find_manifest(ref));
  if (!found) {
    const std::string url = m_impl->session.repository_url(ref) + "/manifests/" + ref.identifier();
    return Error(ErrorCategory::registry,
                 "cannot check manifest '" + ref.str() + "'",
                 "HEAD " + util::redact_url(url) +
                     " answered HTTP 404: the registry has no such manifest",
                 "check the reference (repository and tag or digest)");
  }
  return *found;
}

namespace {

using util::HttpRequest;
using util::HttpResponse;

/// Digest checks of a fetched manifest: the bytes' own digest must be the one a by-digest
/// reference asked for, and the registry's Docker-Content-Digest when it sends one.
Status check_manifest_digest(const Reference& ref,
                             const Digest& computed,
                             const HttpResponse& got,
                             const std::string& what) {
  if (ref.digest && computed != *ref.digest) {
    return Error(ErrorCategory::registry,
                 what,
                 "the received bytes hash to '" + computed.str() + "', not the requested '" +
                     ref.digest->str() + "'",
                 "the registry or a proxy returned the wrong content; do not use this image");
  }
  if (auto header = got.header("Docker-Content-Digest")) {
    auto claimed = Digest::parse(*header);
    if (!claimed || claimed.value() != computed) {
      return Error(ErrorCategory::registry,
                   what,
                   "the registry's Docker-Content-Digest '" + *header +
                       "' does not match the digest of the received bytes '" + computed.str() + "'",
                   "the registry or a proxy returned inconsistent content; retry, and do not use "
                   "this image if it persists");
    }
  }
  return ok_status();
}

} // namespace

Result<std::optional<ManifestHead>> RegistryClient::find_manifest(const Reference& ref) {
  RegistrySession& session = m_impl->session;
  const std::string what = "cannot check manifest '" + ref.str() + "'";
  HttpRequest request{"HEAD", session.repository_url(ref) + "/manifests/" + ref.identifier()};
  request.headers.push_back({"Accept", manifest_accept});
  LUME_UNLOCK_TRY_ASSIGN(auto got, session.send({&ref, false}, request, true, what));
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
  RegistrySession& session = m_impl->session;
  const std::string what = "cannot get manifest '" + ref.str() + "'";
  const std::uint64_t limit = session.options().max_manifest_bytes;
  HttpRequest request{"GET", session.repository_url(ref) + "/manifests/" + ref.identifier()};
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
  auto response = session.send({&ref, false}, request, true, what, reset);
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
  LUME_UNLOCK_TRY(check_manifest_digest(ref, fetched.digest, got, what));
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

Result<Digest> RegistryClient::push_manifest(const Reference& ref,
                                             const std::string& bytes,
                                             const std::string& media_type) {
  RegistrySession& session = m_impl->session;
  const std::string what = "cannot push manifest '" + ref.str() + "'";
  const Digest digest = Digest::of_bytes(bytes);
  if (ref.digest && *ref.digest != digest) {
    return Error(ErrorCategory::usage,
                 what,
                 "the manifest bytes have digest '" + digest.str() + "', the reference names '" +
                     ref.digest->str() + "'");
  }
  const std::uint64_t limit = session.options().max_manifest_bytes;
  if (bytes.size() > limit) {
    return Error(ErrorCategory::usage,
                 what,
                 "the manifest is larger than the " + std::to_string(limit) + "-byte limit");
  }
  HttpRequest request{"PUT", session.repository_url(ref) + "/manifests/" + ref.identifier()};
  request.headers.push_back({"Content-Type", media_type});
  request.body = bytes;
  LUME_UNLOCK_TRY_ASSIGN(auto response, session.send({&ref, true}, request, true, what));
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

Result<std::optional<std::uint64_t>> RegistryClient::stat_blob(const Reference& repository,
                                                               const Digest& digest) {
  RegistrySession& session = m_impl->session;
  const std::string what =
      "cannot check blob '" + digest.str() + "' in '" + repository.repository_path() + "'";
  util::HttpRequest request{"HEAD", session.repository_url(repository) + "/blobs/" + digest.str()};
  request.follow_redirects = true;
  LUME_UNLOCK_TRY_ASSIGN(auto got, session.send({&repository, false}, request, true, what));
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
                                     const std::string& path,
                                     const std::string& partial) {
  RegistrySession& session = m_impl->session;
  const std::string what =
      "cannot download blob '" + blob.digest.str() + "' of '" + repository.repository_path() + "'";
  const auto& options = session.options();
  util::DownloadPlan plan;
  plan.url = session.repository_url(repository) + "/blobs/" + blob.digest.str();
  plan.partial_path = partial.empty() ? path + ".partial" : partial;
  plan.label = "download blob";
  plan.what = what;
  plan.retry = options.retry;
  plan.pinned = true; // the digest is checked below
  plan.size = blob.size;
  plan.https_only = !session.plain_http(repository.registry);
  plan.auth = session.download_auth({&repository, false}, what);
  plan.connections = options.download_connections;
  plan.refused = [&](const util::HttpResponse& response) {
    return make_http_error("GET", plan.url, response).to_error(what);
  };
  auto downloaded = util::download(session.http(), plan, options.progress);
  if (!downloaded) {
    struct stat st {};
    if (::stat(plan.partial_path.c_str(), &st) == 0 && st.st_size == 0) {
      util::discard_partial(plan.partial_path); // nothing to resume
    }
    return downloaded.error();
  }
  const util::DownloadOutcome& got = downloaded.value();
  std::string why, hint;
  if (got.size != blob.size) {
    why = "received " + std::to_string(got.size) + " bytes, the descriptor states " +
          std::to_string(blob.size);
    hint = "the transfer was cut short or the image is inconsistent; retry the command";
  } else if ("sha256:" + got.sha256 != blob.digest.str()) {
    why = "the received bytes hash to 'sha256:" + got.sha256 + "', not the requested '" +
          blob.digest.str() + "'";
    hint = "the registry or a proxy returned the wrong content; do not use this image";
  } else if (std::rename(plan.partial_path.c_str(), path.c_str()) == 0) {
    util::discard_partial(plan.partial_path); // what is left beside it
    return ok_status();
  } else {
    return Error(ErrorCategory::failure, what, "cannot rename the download into place");
  }
  util::discard_partial(plan.partial_path);
  return Error(ErrorCategory::registry, what, why, hint);
}

} // namespace lume_unlock::oci
