#include "oci/manifest.hpp"
#include "oci/registry_session.hpp"
#include "util/encoding.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>

namespace lume_unlock::oci {

namespace {

/// A byte source an upload can read at any offset (a resend after a 401, PATCH chunks).
struct UploadSource {
  std::uint64_t size = 0;
  /// Up to `capacity` bytes at `offset` into `buffer`; fewer only at the end of the source.
  std::function<Result<std::size_t>(std::uint64_t offset, char* buffer, std::size_t capacity)>
      read_at;
  std::shared_ptr<void> keep_alive; ///< whatever read_at needs (an open file)
};

using util::HttpRequest;
using util::HttpResponse;

constexpr std::uint64_t k_progress_step = 8ull << 20;

Result<UploadSource> file_upload_source(const std::string& path, const std::string& what) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error(ErrorCategory::failure, what, std::strerror(errno));
  }
  // Closes the descriptor when the last copy of the source goes.
  std::shared_ptr<void> file(nullptr, [fd](void*) { ::close(fd); });
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    return Error(ErrorCategory::failure, what, std::strerror(errno));
  }
  UploadSource source;
  source.size = static_cast<std::uint64_t>(st.st_size);
  source.keep_alive = file;
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
  return source;
}

UploadSource bytes_upload_source(std::string_view bytes) {
  UploadSource source;
  source.size = bytes.size();
  source.read_at =
      [bytes](std::uint64_t offset, char* buffer, std::size_t capacity) -> Result<std::size_t> {
    std::size_t n =
        std::min<std::size_t>(capacity, bytes.size() - static_cast<std::size_t>(offset));
    std::copy_n(bytes.data() + offset, n, buffer);
    return n;
  };
  return source;
}

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
        m_monolithic(known_digest && source.size <= session.options().chunked_upload_threshold) {
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

  /// A request whose body is the source's bytes [begin, end), read by read_body().
  HttpRequest body_request(const std::string& method,
                           const std::string& url,
                           std::uint64_t begin,
                           std::uint64_t end) {
    HttpRequest r{method, url};
    r.timeout = std::chrono::milliseconds(0);
    r.headers.push_back({"Content-Type", media_type::octet_stream});
    r.body_size = end - begin;
    r.body_reader = [this, begin, end](char* buffer, std::size_t capacity) -> std::size_t {
      return read_body(begin, end, buffer, capacity);
    };
    return r;
  }

  /// libcurl's read callback: pread, each byte hashed once, in order (unless the registry checks
  /// a known digest; a resend after a 401 reads the range again); progress every 8 MiB.
  std::size_t
  read_body(std::uint64_t begin, std::uint64_t end, char* buffer, std::size_t capacity) {
    const std::uint64_t at = begin + m_position;
    const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(capacity, end - at));
    if (wanted == 0) {
      return 0;
    }
    auto n = m_source.read_at(at, buffer, wanted);
    if (!n) {
      m_read_error = n.error();
      return HttpRequest::abort_upload;
    }
    if (!m_monolithic && at + n.value() > m_hashed) {
      const std::uint64_t skip = m_hashed > at ? m_hashed - at : 0;
      m_hasher.update(buffer + skip, n.value() - skip);
      m_hashed = at + n.value();
    }
    m_position += n.value();
    if (at / k_progress_step != (at + n.value()) / k_progress_step) {
      m_session.report("upload blob", at + n.value(), m_source.size, false);
    }
    return n.value();
  }

  /// Sends one request that carries body bytes; every attempt (a resend after a 401) reads
  /// its range again from the start.
  Result<HttpResponse> send_body(const HttpRequest& request) {
    auto response = m_session.send(m_target, request, false, m_what, [&]() -> Status {
      m_position = 0;
      return ok_status();
    });
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
      LUME_UNLOCK_TRY_ASSIGN(auto response, send_body(patch));
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
    auto sent = m_monolithic ? send_body(finish) : m_session.send(m_target, finish, false, m_what);
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
  std::uint64_t m_hashed = 0;
  std::optional<Error> m_read_error;
};

} // namespace

Result<Descriptor> RegistryClient::push_blob_file(const Reference& repository,
                                                  const std::string& path,
                                                  const std::string& media_type,
                                                  std::optional<Digest> known_digest) {
  const std::string what = "cannot upload '" + path + "' to '" + repository.repository_path() + "'";
  LUME_UNLOCK_TRY_ASSIGN(auto source, file_upload_source(path, what));
  return BlobUpload(m_impl->session, repository, source, media_type, known_digest).run();
}

Result<Descriptor> RegistryClient::push_blob_bytes(const Reference& repository,
                                                   std::string_view bytes,
                                                   const std::string& media_type) {
  const UploadSource source = bytes_upload_source(bytes);
  const std::optional<Digest> digest = Digest::of_bytes(bytes);
  return BlobUpload(m_impl->session, repository, source, media_type, digest).run();
}

} // namespace lume_unlock::oci
