#pragma once

#include "support/test_ca.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class SSLServer;
struct Request;
struct Response;
} // namespace httplib

namespace lume_unlock::test {

/// A loopback HTTPS server (cpp-httplib's SSLServer, the throwaway CA's certificate) standing in
/// for release pages and model hubs: serves registered bytes or files at paths, honours
/// "Range: bytes=N-" and "bytes=N-M" with 206 and Content-Range (RFC 9110 §14; 416 past the
/// end), streams files
/// without holding them in memory, and has fault modes a test turns on. Counts requests and
/// body bytes sent, so a test can assert "nothing was transferred".
class ArtifactServer {
public:
  /// Listens on 127.0.0.1 at a free port. Null with `why_not` when TLS cannot be set up.
  static std::unique_ptr<ArtifactServer> start(const TestCa& ca, std::string& why_not);
  ~ArtifactServer();
  ArtifactServer(const ArtifactServer&) = delete;
  ArtifactServer& operator=(const ArtifactServer&) = delete;

  void serve_bytes(const std::string& path, std::string bytes);
  void serve_file(const std::string& path, const std::string& file_path);
  /// 302 from `path` to `location` (a path on this server, or any absolute URL).
  void redirect(const std::string& path, const std::string& location);
  /// A release asset as github.com serves one (docs/sources.md): every GET of `path` answers 302
  /// to a freshly signed URL on this server (/release-assets/<n>?X-Amz-Expires=300&
  /// X-Amz-Signature=…) that serves `bytes` for `uses` requests and then answers 403 "Request
  /// has expired", as an expired S3 signature does. Any other path is a 404, as for a misnamed
  /// asset.
  void publish_release_asset(const std::string& path, std::string bytes, unsigned uses = 1000);

  /// A file as Hugging Face serves `resolve/<revision>/<file>` (docs/sources.md): GET and HEAD
  /// of `path` answer 302 to `cdn_url` with X-Linked-Size, X-Linked-Etag (the SHA-256 in quotes,
  /// whatever the CDN serves), X-Repo-Commit and ETag. With `required_token`, a request without
  /// "Authorization: Bearer <token>" gets 401 as a gated repository answers.
  void publish_hub_file(const std::string& path,
                        const std::string& sha256,
                        std::uint64_t size,
                        const std::string& cdn_url,
                        const std::string& required_token = {});

  /// The next `times` responses with a body longer than `bytes` close the connection after
  /// `bytes` body bytes.
  void drop_after(std::uint64_t bytes, unsigned times = 1);
  /// The next `times` responses with a body longer than `bytes` slow down after `bytes` body
  /// bytes to a byte every
  /// 250 ms until the client gives up, as a stalled CDN connection does.
  void stall_after(std::uint64_t bytes, unsigned times = 1);
  /// The next `times` requests (after `skip` more are answered normally) answer `status` (429,
  /// 503) with "Retry-After: <seconds>".
  void answer_busy(int status, unsigned retry_after_seconds, unsigned times = 1, unsigned skip = 0);
  /// Once `requests` requests for `path` have arrived, the next ones find `bytes` there instead,
  /// under a new ETag: a file replaced by a new version in the middle of a download.
  void replace_after(const std::string& path, unsigned requests, std::string bytes);
  /// Serve every body with its bytes changed (same length): a tampered mirror.
  void serve_wrong_bytes(bool on);
  /// Answer Range requests with 200 and the whole body, as some CDNs do.
  void ignore_range(bool on);
  /// Answer a Range whatever its If-Range says, as a broken cache might: only the ETag of the
  /// 206 then tells the client the bytes are of another version.
  void ignore_if_range(bool on);

  std::string url(const std::string& path) const;
  int port() const { return m_port; }

  std::uint64_t requests() const { return m_requests; }
  /// Requests whose path (without the query) was `path`.
  std::uint64_t requests_for(const std::string& path) const;
  std::uint64_t body_bytes_sent() const { return m_body_bytes; }
  /// The Range header of every request that had one, in arrival order.
  std::vector<std::string> range_headers() const;
  /// The If-Range header (empty when none) of those same requests, in the same order.
  std::vector<std::string> if_range_headers() const;
  /// "<path> <Authorization header or nothing>" of every request, in arrival order.
  std::vector<std::string> authorizations() const;
  /// The ETag this server gives the bytes at `path` (a new one each time they are replaced);
  /// "If-Range" with another value gets the whole body, as RFC 9110 §13.1.5 says.
  std::string etag(const std::string& path) const;

private:
  ArtifactServer() = default;
  struct Content {
    std::string bytes;
    std::string file_path; ///< when set, bytes is unused
    std::uint64_t size = 0;
    std::string etag;
  };
  struct HubFile {
    std::string sha256;
    std::uint64_t size = 0;
    std::string cdn_url;
    std::string required_token;
  };
  /// Answers a Hugging Face-like resolve path; false when `path` is not one.
  bool answer_hub_file(const httplib::Request& request, httplib::Response& response);
  /// Answers when a busy or signed-URL rule applies; false to go on.
  bool answer_before_content(const httplib::Request& request, httplib::Response& response);
  struct Fault {
    std::optional<std::uint64_t> drop_at;
    std::optional<std::uint64_t> stall_at;
    bool wrong = false;
  };
  void install_handler();
  void provide_body(httplib::Response& response,
                    const Content& content,
                    std::uint64_t start,
                    std::uint64_t end,
                    const Fault& fault);
  static std::optional<std::string>
  read_chunk(const Content& content, std::uint64_t at, std::size_t n);

  std::unique_ptr<httplib::SSLServer> m_server;
  int m_port = 0;
  std::thread m_thread;

  mutable std::mutex m_mutex;
  std::map<std::string, Content> m_contents;
  std::map<std::string, std::string> m_redirects;
  struct ReleaseAsset {
    std::string bytes;
    unsigned uses = 0;
  };
  std::map<std::string, ReleaseAsset> m_release_assets;
  std::map<std::string, unsigned> m_signed_uses; ///< signed path → requests it still answers
  std::map<std::string, std::uint64_t> m_path_requests;
  unsigned m_signatures = 0;
  std::map<std::string, HubFile> m_hub_files;
  std::vector<std::string> m_ranges;
  std::vector<std::string> m_if_ranges;
  struct Replacement {
    unsigned after = 0;
    std::string bytes;
  };
  std::map<std::string, Replacement> m_replacements;
  unsigned m_busy_skip = 0;
  std::vector<std::string> m_authorizations;
  unsigned m_generation = 0;
  std::uint64_t m_stall_after = 0;
  unsigned m_stalls_left = 0;
  int m_busy_status = 0;
  unsigned m_busy_retry_after = 0;
  unsigned m_busy_left = 0;
  std::atomic<bool> m_stopping{false};
  std::uint64_t m_drop_after = 0;
  unsigned m_drops_left = 0;
  bool m_wrong_bytes = false;
  bool m_ignore_range = false;
  bool m_ignore_if_range = false;

  std::atomic<std::uint64_t> m_requests{0};
  std::atomic<std::uint64_t> m_body_bytes{0};
};

} // namespace lume_unlock::test
