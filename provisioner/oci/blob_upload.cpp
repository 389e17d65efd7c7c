#include "oci/blob_upload.hpp"

#include "oci/hashing_read_ahead.hpp"
#include "oci/media_types.hpp"
#include "oci/registry_error.hpp"
#include "util/percent_encode.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

#include <algorithm>

namespace lume_unlock::oci {

namespace {

using util::HttpRequest;
using util::HttpResponse;

constexpr std::uint64_t k_progress_step = 8ull << 20;

/// One blob upload, from the existence check to the cross-check, as its own object so each
/// request is one short method over shared state (the upload URL, the hash, read errors).
class BlobUpload {
public:
  BlobUpload(RegistrySession& session,
             const Reference& repo,
             const UploadSource& source,
             const std::string& media_type,
             const std::optional<Digest>& known_digest)
      : m_session(session), m_repo(repo), m_source(source),
        m_known(known_digest), m_target{&repo, true},
        // A monolithic PUT with a known digest is checked by the registry; no need to hash here.
        m_monolithic(known_digest && source.size <= session.options().chunked_upload_threshold),
        m_reader(source, m_monolithic ? nullptr : &m_hasher) {
    // Named by digest when it is known up front, else by repository only until it is computed.
    m_what = known_digest ? "cannot upload blob '" + known_digest->str() + "' to '" +
                                repo.repository_path() + "'"
                          : "cannot upload a blob to '" + repo.repository_path() + "'";
    m_descriptor.media_type = media_type;
    m_descriptor.size = source.size;
  }

  Result<Descriptor> run() {
    if (m_known) {
      m_descriptor.digest = *m_known;
      LUME_UNLOCK_TRY_ASSIGN(bool present, already_present());
      if (present) {
        return m_descriptor;
      }
    }
    HttpRequest start{"POST", m_session.repository_url(m_repo) + "/blobs/uploads/"};
    LUME_UNLOCK_TRY_ASSIGN(auto started, m_session.send(m_target, start, false, m_what));
    if (started.status != 202) {
      return make_http_error("POST", start.url, started).to_error(m_what);
    }
    LUME_UNLOCK_TRY_ASSIGN(m_upload_url, location_of(started, "POST", start.url));
    HttpRequest finish;
    if (m_monolithic) {
      // Monolithic: POST, then one PUT carrying the whole body and the digest.
      finish = body_request("PUT", digest_url(*m_known), 0, m_source.size);
    } else {
      LUME_UNLOCK_TRY(send_chunks());
      finish = HttpRequest{"PUT", digest_url(m_descriptor.digest)};
      finish.headers.push_back({"Content-Type", media_type::octet_stream});
    }
    LUME_UNLOCK_TRY(send_finish(finish));
    LUME_UNLOCK_TRY(cross_check());
    m_session.report("upload blob", m_source.size, m_source.size, true);
    return m_descriptor;
  }

private:
  /// Same digest and size at the registry already: nothing to send.
  Result<bool> already_present() {
    HttpRequest head{"HEAD", m_session.repository_url(m_repo) + "/blobs/" + m_known->str()};
    LUME_UNLOCK_TRY_ASSIGN(auto response, m_session.send(m_target, head, true, m_what));
    return response.status == 200 &&
           response.header("Content-Length") == std::to_string(m_source.size);
  }

  Result<std::string>
  location_of(const HttpResponse& response, const std::string& method, const std::string& url) {
    auto location = response.header("Location");
    if (!location || location->empty()) {
      return Error(ErrorCategory::registry,
                   m_what,
                   method + " " + util::redact_url(url) + " answered without a Location header");
    }
    if (util::starts_with(*location, "http://") || util::starts_with(*location, "https://")) {
      return *location;
    }
    return m_session.base_url(m_repo.registry) + (location->front() == '/' ? "" : "/") + *location;
  }

  std::string digest_url(const Digest& digest) const {
    return with_query(m_upload_url, "digest=" + util::percent_encode(digest.str(), "/:,"));
  }

  /// A request whose body is the source's bytes [begin, end), which send_body() reads ahead.
  HttpRequest body_request(const std::string& method,
                           const std::string& url,
                           std::uint64_t begin,
                           std::uint64_t end) {
    HttpRequest r{method, url};
    r.timeout = std::chrono::milliseconds(0);
    r.headers.push_back({"Content-Type", media_type::octet_stream});
    r.body_size = end - begin;
    r.body_reader = [this, begin](char* buffer, std::size_t capacity) -> std::size_t {
      return read_body(begin, buffer, capacity);
    };
    return r;
  }

  /// libcurl's read callback: bytes the read-ahead thread has read (and hashed, unless the
  /// registry checks a known digest); progress is reported here, on the caller's thread.
  std::size_t read_body(std::uint64_t begin, char* buffer, std::size_t capacity) {
    auto n = m_reader.read(buffer, capacity);
    if (!n) {
      m_read_error = n.error();
      return HttpRequest::abort_upload;
    }
    const std::uint64_t at = begin + m_position;
    m_position += n.value();
    if (at / k_progress_step != (at + n.value()) / k_progress_step) {
      m_session.report("upload blob", at + n.value(), m_source.size, false);
    }
    return n.value();
  }

  /// Sends one request that carries the body bytes [begin, end); every attempt (a resend
  /// after a 401) reads the range again from its start.
  Result<HttpResponse>
  send_body(const HttpRequest& request, std::uint64_t begin, std::uint64_t end) {
    auto response = m_session.send(m_target, request, false, m_what, [&]() -> Status {
      m_position = 0;
      m_reader.start(begin, end);
      return ok_status();
    });
    m_reader.stop();
    if (m_read_error) {
      return m_read_error->with_context(m_what);
    }
    return response;
  }

  /// PATCH chunks (one chunk when the digest is unknown and the blob is small); the digest
  /// computed while sending becomes the descriptor's.
  Status send_chunks() {
    const auto& options = m_session.options();
    const std::uint64_t chunk = m_source.size > options.chunked_upload_threshold
                                    ? options.upload_chunk_size
                                    : std::max<std::uint64_t>(m_source.size, 1);
    for (std::uint64_t offset = 0; offset < m_source.size;) {
      const std::uint64_t end = std::min(m_source.size, offset + chunk);
      HttpRequest patch = body_request("PATCH", m_upload_url, offset, end);
      patch.headers.push_back(
          {"Content-Range", std::to_string(offset) + "-" + std::to_string(end - 1)});
      LUME_UNLOCK_TRY_ASSIGN(auto response, send_body(patch, offset, end));
      if (response.status != 202) {
        return make_http_error("PATCH", m_upload_url, response).to_error(m_what);
      }
      LUME_UNLOCK_TRY_ASSIGN(m_upload_url, location_of(response, "PATCH", m_upload_url));
      offset = end;
    }
    const Digest computed = Digest::from_sha256_hex(m_hasher.finish_hex()).value();
    if (m_known && computed != *m_known) {
      return Error(ErrorCategory::failure,
                   m_what,
                   "the bytes sent hash to '" + computed.str() + "', not the expected '" +
                       m_known->str() + "' (did the file change during the upload?)");
    }
    m_descriptor.digest = computed;
    m_what = "cannot upload blob '" + computed.str() + "' to '" + m_repo.repository_path() + "'";
    return ok_status();
  }

  /// The closing PUT (carrying the whole body when monolithic): 201, and the digest the
  /// registry stored must be the one sent.
  Status send_finish(const HttpRequest& finish) {
    auto sent = m_monolithic ? send_body(finish, 0, m_source.size)
                             : m_session.send(m_target, finish, false, m_what);
    LUME_UNLOCK_TRY_ASSIGN(auto finished, std::move(sent));
    if (finished.status != 201) {
      return make_http_error("PUT", finish.url, finished).to_error(m_what);
    }
    if (auto header = finished.header("Docker-Content-Digest");
        header && *header != m_descriptor.digest.str()) {
      return Error(ErrorCategory::registry,
                   m_what,
                   "the registry stored digest '" + *header + "', the uploaded bytes have '" +
                       m_descriptor.digest.str() + "'");
    }
    return ok_status();
  }

  /// The registry must now serve the blob with the uploaded size.
  Status cross_check() {
    HttpRequest check{"HEAD",
                      m_session.repository_url(m_repo) + "/blobs/" + m_descriptor.digest.str()};
    LUME_UNLOCK_TRY_ASSIGN(auto checked, m_session.send(m_target, check, true, m_what));
    if (checked.status != 200 ||
        checked.header("Content-Length") != std::to_string(m_source.size)) {
      return Error(ErrorCategory::registry,
                   m_what,
                   "after the upload, HEAD answered HTTP " + std::to_string(checked.status) +
                       " with size " + checked.header("Content-Length").value_or("none") +
                       " instead of 200 with size " + std::to_string(m_source.size));
    }
    return ok_status();
  }

  RegistrySession& m_session;
  const Reference& m_repo;
  const UploadSource& m_source;
  const std::optional<Digest>& m_known;
  const RequestTarget m_target;
  const bool m_monolithic;
  std::string m_what;
  Descriptor m_descriptor;
  std::string m_upload_url;
  util::Sha256 m_hasher;
  std::uint64_t m_position = 0;
  std::optional<Error> m_read_error;
  HashingReadAhead m_reader; ///< last: its thread stops before the hasher goes
};

} // namespace

Result<Descriptor> push_blob(RegistrySession& session,
                             const Reference& repository,
                             const UploadSource& source,
                             const std::string& media_type,
                             const std::optional<Digest>& known_digest) {
  return BlobUpload(session, repository, source, media_type, known_digest).run();
}

} // namespace lume_unlock::oci
