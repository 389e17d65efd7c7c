#pragma once

#include "result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::util {

struct HttpHeader {
  std::string name;
  std::string value;
};

struct HttpResponse;

struct HttpRequest {
  HttpRequest() = default;
  HttpRequest(std::string method_, std::string url_)
      : method(std::move(method_)), url(std::move(url_)) {}

  std::string method = "GET";
  std::string url;
  std::vector<HttpHeader> headers;
  /// Request body; a Content-Length is always sent for methods that carry one.
  std::string body;
  /// Streaming upload instead of `body`: fill `buffer` with up to `capacity` bytes, return how
  /// many (0 = end). `body_size` is then required (sent as Content-Length).
  std::function<std::size_t(char* buffer, std::size_t capacity)> body_reader;
  /// What body_reader returns to abort the transfer (a read error on the caller's side).
  static constexpr std::size_t abort_upload = 0x10000000; // CURL_READFUNC_ABORT
  std::optional<std::uint64_t> body_size;
  /// Streaming download: called with each chunk of the response body; return false to abort.
  /// When set, HttpResponse::body stays empty.
  std::function<bool(std::string_view chunk)> body_sink;
  /// With a body_sink: only 2xx bodies go to the sink; other bodies (error documents) land in
  /// HttpResponse::body, so a failed download never writes an error page into the caller's file.
  bool sink_success_only = false;
  /// With a body_sink: called once with the status and headers of the final response (after
  /// redirects, no body yet) just before its first body byte reaches the sink; return false to
  /// abort the transfer (kind aborted). Not called for a response without a body, nor for bodies
  /// that sink_success_only keeps out of the sink. A resuming download decides here whether the
  /// bytes continue its file (206) or replace it (200).
  std::function<bool(const HttpResponse& head)> on_sink_start;
  /// Whole-request deadline; zero means none: then only the stall limit below ends a transfer.
  std::chrono::milliseconds timeout{60000};
  /// Without a deadline, a transfer slower than `stall_bytes_per_second` for `stall_window` is
  /// dropped (kind stalled), so a stalled CDN connection never hangs a create.
  std::uint32_t stall_bytes_per_second = 1024;
  std::chrono::seconds stall_window{60};
  /// Sent as "Authorization: Bearer …" through libcurl's own authentication, which never
  /// passes it to another host a redirect leads to. Never logged.
  std::string bearer_token;
  std::chrono::milliseconds connect_timeout{10000};
  bool follow_redirects = false;
  /// Only https, for the request and every redirect (a redirect to http fails with kind
  /// protocol): for artifacts fetched over TLS only.
  bool https_only = false;
  /// The most bytes kept in HttpResponse::body (a body_sink's chunks do not count): a longer
  /// body aborts the transfer with a TransportError (kind aborted) that names this limit, so a
  /// hostile or broken server cannot make the client hold gigabytes.
  std::size_t max_body_bytes = default_max_body_bytes;
  /// JSON documents and error pages are KiB; 16 MiB leaves room for a long VM list.
  static constexpr std::size_t default_max_body_bytes = 16u << 20;
};

struct HttpResponse {
  long status = 0;
  /// Headers of the final response, in arrival order.
  std::vector<HttpHeader> headers;
  std::string body;

  /// Value of the last header with this name (case-insensitive), if any.
  std::optional<std::string> header(std::string_view name) const;
};

/// Why a request got no HTTP response at all.
struct TransportError {
  /// protocol: the URL or a redirect uses a scheme the request does not allow. plain_http: the
  /// server answered the TLS handshake with plain HTTP (it serves http:// on that port).
  /// stalled: below the request's stall limit for its window.
  enum class Kind {
    connection_refused,
    timeout,
    stalled,
    resolve,
    tls,
    plain_http,
    aborted,
    protocol,
    other
  };
  Kind kind = Kind::other;
  /// libcurl's explanation; never contains credentials.
  std::string detail;
};

/// TLS peers and hosts are always verified.
struct HttpClientOptions {
  /// PEM file of the certificate authorities to trust instead of the system store; empty means
  /// the system store.
  std::string ca_file;
};

/// A libcurl easy handle reused across requests, so connections stay alive between calls.
/// One client per thread; not thread-safe.
class HttpClient {
public:
  explicit HttpClient(HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(HttpClient&&) noexcept;
  HttpClient& operator=(HttpClient&&) noexcept;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  Result<HttpResponse, TransportError> send(const HttpRequest& request);

  /// Requests sent so far (for --verbose statistics and tests).
  std::uint64_t request_count() const { return m_request_count; }
  /// What this client was made with: a download over several connections makes one client per
  /// connection, each trusting the same authorities.
  const HttpClientOptions& options() const { return m_options; }

private:
  struct Handle;
  std::unique_ptr<Handle> m_handle;
  HttpClientOptions m_options;
  std::uint64_t m_request_count = 0;
};

/// The URL with user information removed and the values of credential-like query parameters
/// (token, access_token, password, signature, ...) replaced by REDACTED — for logs and errors.
std::string redact_url(std::string_view url);

/// The host (with port, without user information) of a URL: "user@127.0.0.1:5000".
std::string url_host(std::string_view url);

/// True when the URL's host is a loopback address (127.0.0.0/8, ::1, localhost).
bool is_loopback_url(std::string_view url);

/// True for a host (with optional :port) that is loopback.
bool is_loopback_host(std::string_view host);

} // namespace lume_unlock::util
