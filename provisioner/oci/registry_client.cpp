#include "oci/registry_client.hpp"

#include "oci/registry_session.hpp"

namespace lume_unlock::oci {

// The client is a facade: the session (registry_session) owns the connection, auth and retries;
// manifest_requests, blob_download and blob_upload own the requests.
struct RegistryClient::Impl {
  RegistrySession session;
  explicit Impl(RegistryClientOptions options) : session(std::move(options)) {}
};

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

Result<std::optional<ManifestHead>> RegistryClient::find_manifest(const Reference& ref) {
  return oci::find_manifest(m_impl->session, ref);
}

Result<FetchedManifest> RegistryClient::get_manifest(const Reference& ref) {
  return oci::get_manifest(m_impl->session, ref);
}

Result<std::optional<std::uint64_t>> RegistryClient::stat_blob(const Reference& repository,
                                                               const Digest& digest) {
  return oci::stat_blob(m_impl->session, repository, digest);
}

Status RegistryClient::download_blob(const Reference& repository,
                                     const Descriptor& blob,
                                     const std::string& path,
                                     const std::string& partial) {
  return oci::download_blob(m_impl->session, repository, blob, path, partial);
}

Result<Descriptor> RegistryClient::push_blob_file(const Reference& repository,
                                                  const std::string& path,
                                                  const std::string& media_type,
                                                  std::optional<Digest> known_digest) {
  const std::string what = "cannot upload '" + path + "' to '" + repository.repository_path() + "'";
  LUME_UNLOCK_TRY_ASSIGN(auto source, file_upload_source(path, what));
  return push_blob(m_impl->session, repository, source, media_type, known_digest);
}

Result<Descriptor> RegistryClient::push_blob_bytes(const Reference& repository,
                                                   std::string_view bytes,
                                                   const std::string& media_type) {
  return push_blob(
      m_impl->session, repository, bytes_upload_source(bytes), media_type, Digest::of_bytes(bytes));
}

Result<Digest> RegistryClient::push_manifest(const Reference& ref,
                                             const std::string& bytes,
                                             const std::string& media_type) {
  return oci::push_manifest(m_impl->session, ref, bytes, media_type);
}

} // namespace lume_unlock::oci
