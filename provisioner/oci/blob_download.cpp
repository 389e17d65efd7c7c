#include "oci/blob_download.hpp"

#include "oci/hashing_file_writer.hpp"
#include "oci/registry_error.hpp"
#include "util/atomic_file.hpp"

#include <cstdlib>

namespace lume_unlock::oci {

namespace {

using util::HttpRequest;
using util::HttpResponse;

constexpr std::uint64_t k_progress_step = 8ull << 20;

/// The receiving end of one blob download: a temporary file per attempt, the bytes counted as
/// they arrive and handed to a HashingFileWriter (hashed and written on its thread, in order),
/// and the file renamed into place only when size and digest match.
class BlobReceiver {
public:
  BlobReceiver(RegistrySession& session,
               const Descriptor& blob,
               const std::string& path,
               const std::string& what)
      : m_session(session), m_blob(blob), m_path(path), m_what(what) {}

  /// Before every attempt: an earlier attempt's temporary file is removed, a new one made.
  Status reset() {
    m_writer.reset(); // the writer uses the file: it goes first
    m_file.reset();
    auto created = util::AtomicFile::create(m_path);
    if (!created) {
      return created.error().with_context(m_what);
    }
    m_file.emplace(std::move(created).value());
    m_writer.emplace(*m_file);
    m_received = 0;
    m_next_report = k_progress_step;
    m_too_large = false;
    m_write_failed = false;
    return ok_status();
  }

  /// The body sink: false aborts the transfer (too many bytes, or the file cannot be written).
  bool accept(std::string_view chunk) {
    m_received += chunk.size();
    if (m_received > m_blob.size) {
      m_too_large = true;
      return false;
    }
    if (!m_writer->push(chunk)) {
      m_write_failed = true;
      return false;
    }
    if (m_received >= m_next_report) {
      m_session.report("download blob", m_received, m_blob.size, false);
      m_next_report += k_progress_step;
    }
    return true;
  }

  /// After the transfer: every check in order, then the rename.
  Status finish(Result<HttpResponse> response, const std::string& url) {
    if (m_too_large) {
      return Error(ErrorCategory::registry,
                   m_what,
                   "the registry sent more than the " + std::to_string(m_blob.size) +
                       " bytes the descriptor states",
                   "the image is inconsistent; do not use it");
    }
    if (m_write_failed) {
      auto failed = m_writer->finish();
      return failed.error().with_context(m_what);
    }
    if (!response) {
      return response.error();
    }
    if (response.value().status != 200) {
      return make_http_error("GET", url, response.value()).to_error(m_what);
    }
    // Every byte is hashed and written before the checks; only then is the file renamed.
    auto hex = m_writer->finish();
    if (!hex) {
      return hex.error().with_context(m_what);
    }
    LUME_UNLOCK_TRY(check_content(hex.value()));
    if (auto committed = m_file->commit(); !committed) {
      return committed.error().with_context(m_what);
    }
    m_session.report("download blob", m_received, m_blob.size, true);
    return ok_status();
  }

private:
  Status check_content(const std::string& hex) const {
    if (m_received != m_blob.size) {
      return Error(ErrorCategory::registry,
                   m_what,
                   "received " + std::to_string(m_received) + " bytes, the descriptor states " +
                       std::to_string(m_blob.size),
                   "the transfer was cut short or the image is inconsistent; retry the command");
    }
    const std::string actual = "sha256:" + hex;
    if (actual != m_blob.digest.str()) {
      return Error(ErrorCategory::registry,
                   m_what,
                   "the received bytes hash to '" + actual + "', not the requested '" +
                       m_blob.digest.str() + "'",
                   "the registry or a proxy returned the wrong content; do not use this image");
    }
    return ok_status();
  }

  RegistrySession& m_session;
  const Descriptor& m_blob;
  const std::string& m_path;
  const std::string& m_what;
  std::optional<util::AtomicFile> m_file;
  std::optional<HashingFileWriter> m_writer; ///< after m_file: destroyed before it
  std::uint64_t m_received = 0;
  std::uint64_t m_next_report = k_progress_step;
  bool m_too_large = false;
  bool m_write_failed = false;
};

} // namespace

Result<std::optional<std::uint64_t>>
stat_blob(RegistrySession& session, const Reference& repository, const Digest& digest) {
  const std::string what =
      "cannot check blob '" + digest.str() + "' in '" + repository.repository_path() + "'";
  HttpRequest request{"HEAD", session.repository_url(repository) + "/blobs/" + digest.str()};
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

Status download_blob(RegistrySession& session,
                     const Reference& repository,
                     const Descriptor& blob,
                     const std::string& path) {
  const std::string what =
      "cannot download blob '" + blob.digest.str() + "' of '" + repository.repository_path() + "'";
  HttpRequest request{"GET", session.repository_url(repository) + "/blobs/" + blob.digest.str()};
  request.follow_redirects = true; // ghcr.io answers with a redirect to its blob storage
  request.timeout = std::chrono::milliseconds(0); // big blobs: only the stall limit applies
  request.sink_success_only = true;
  BlobReceiver receiver(session, blob, path, what);
  request.body_sink = [&](std::string_view chunk) { return receiver.accept(chunk); };
  auto response =
      session.send({&repository, false}, request, true, what, [&] { return receiver.reset(); });
  return receiver.finish(std::move(response), request.url);
}

} // namespace lume_unlock::oci
