#pragma once

#include "support/test_ca.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class SSLServer;
}

namespace lume_unlock::test {

/// A loopback HTTPS server (cpp-httplib's SSLServer, the throwaway CA's certificate) standing in
/// for release pages and model hubs: serves registered bytes or files at paths, honours
/// "Range: bytes=N-" with 206 and Content-Range (RFC 9110 §14; 416 past the end), streams files
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

  /// The next `times` responses with a body close the connection after `bytes` body bytes.
  void drop_after(std::uint64_t bytes, unsigned times = 1);
  /// Serve every body with its bytes changed (same length): a tampered mirror.
  void serve_wrong_bytes(bool on);
  /// Answer Range requests with 200 and the whole body, as some CDNs do.
  void ignore_range(bool on);

  std::string url(const std::string& path) const;
  int port() const { return m_port; }

  std::uint64_t requests() const { return m_requests; }
  /// Requests whose path (without the query) was `path`.
  std::uint64_t requests_for(const std::string& path) const;
  std::uint64_t body_bytes_sent() const { return m_body_bytes; }
  /// The Range header of every request that had one, in arrival order.
  std::vector<std::string> range_headers() const;

private:
  ArtifactServer() = default;
  struct Content {
    std::string bytes;
    std::string file_path; ///< when set, bytes is unused
    std::uint64_t size = 0;
  };
  void install_handler();

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
  std::vector<std::string> m_ranges;
  std::uint64_t m_drop_after = 0;
  unsigned m_drops_left = 0;
  bool m_wrong_bytes = false;
  bool m_ignore_range = false;

  std::atomic<std::uint64_t> m_requests{0};
  std::atomic<std::uint64_t> m_body_bytes{0};
};

} // namespace lume_unlock::test
