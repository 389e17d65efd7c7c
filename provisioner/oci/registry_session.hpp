#pragma once

#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "util/download.hpp"
#include "util/error.hpp"
#include "util/http_client.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::oci {

/// One parsed `WWW-Authenticate` challenge (RFC 7235): a scheme and its auth-params.
/// Parameter names are lower-cased; values are unquoted.
struct AuthChallenge {
  std::string scheme; ///< lower-cased: "bearer", "basic"
  std::map<std::string, std::string> params;

  std::optional<std::string> param(const std::string& name) const;
};

/// Parses the first challenge of a header value such as
/// `Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:a/b:pull"`.
/// nullopt when there is no scheme or a parameter is malformed.
std::optional<AuthChallenge> parse_auth_challenge(std::string_view header);

/// A registry answered with an unexpected HTTP status. Carries only what is safe to print: the
/// URL is redacted, Authorization headers are never kept.
struct RegistryHttpError {
  std::string method;
  std::string url; ///< redacted
  long status = 0;
  std::string registry_message; ///< "CODE: message" entries of the OCI errors[] body, "; "-joined
  std::string body_preview;     ///< capped preview, only when there is no errors[] message

  /// 5xx and 429 may succeed when retried.
  bool temporary() const { return status == 429 || status >= 500; }
  /// "GET <url> answered HTTP 404: MANIFEST_UNKNOWN: manifest unknown".
  std::string why() const;
  /// An Error (category registry) with `what_failed`, this as the why and a hint by status.
  Error to_error(const std::string& what_failed) const;
};

RegistryHttpError make_http_error(const std::string& method,
                                  const std::string& url,
                                  const util::HttpResponse& response);

/// An Error for a request that got no HTTP response: category registry (exit 4), except a
/// registry that speaks plain HTTP where TLS was asked, which is a setup to change (usage, exit
/// 2). `ca_file` is the CA file the request trusted (empty: the system's), named when the
/// certificate did not verify.
Error transport_error(const std::string& what_failed,
                      const std::string& method,
                      const std::string& url,
                      const util::TransportError& error,
                      const std::string& ca_file = {});

/// Where a request goes and with which scope it authenticates.
struct RequestTarget {
  const Reference* ref;
  bool push;
};

/// `url` with one more query parameter ("?" or "&" as the URL needs).
std::string with_query(const std::string& url, const std::string& parameter);

/// A Content-Type without its parameters ("application/json; charset=utf-8" → "application/json").
std::string strip_parameters(const std::string& content_type);

/// The registry's side of every request: one reused HTTP connection, the Authorization each
/// (registry, repository, scope) has earned by answering a 401 challenge (token or Basic), and
/// bounded retries of idempotent requests. The manifest and blob requests all go through send().
/// Authorization values are never printed. Not thread-safe.
class RegistrySession {
public:
  explicit RegistrySession(RegistryClientOptions options);

  const RegistryClientOptions& options() const { return m_options; }

  /// True for hosts listed as --insecure-registry (with or without their port).
  bool plain_http(const std::string& registry) const;
  /// "http://HOST" for --insecure-registry hosts, else "https://HOST".
  std::string base_url(const std::string& registry) const;
  /// base_url + "/v2/" + the repository.
  std::string repository_url(const Reference& ref) const;

  /// Sends with auth, answering one 401 challenge, and retries idempotent requests on
  /// temporary failures (transport errors, 429, 5xx). `reset` runs before every attempt (fresh
  /// sinks and readers). The response is returned whatever its status; only a missing response
  /// or an unanswerable challenge is an Error.
  Result<util::HttpResponse> send(const RequestTarget& target,
                                  util::HttpRequest request,
                                  bool idempotent,
                                  const std::string& what_failed,
                                  const std::function<Status()>& reset = {});

  /// The session's auth for util::download: signs its requests and answers a 401 once.
  util::DownloadAuth download_auth(const RequestTarget& target, const std::string& what_failed);
  util::HttpClient& http() { return m_http; }

  /// Byte progress of a blob transfer to the options' progress callback, if any.
  void report(const std::string& step, std::uint64_t done, std::uint64_t total, bool finished);

  std::uint64_t request_count() const { return m_http.request_count(); }

private:
  void sign(const RequestTarget& target, util::HttpRequest& request) const;
  Status answer_challenge(const RequestTarget& target,
                          const util::HttpResponse& response,
                          const std::string& request_line,
                          const std::string& what_failed);
  Status authenticate(const RequestTarget& target,
                      const AuthChallenge& challenge,
                      const std::string& what_failed);
  Result<std::string> request_token(const RequestTarget& target,
                                    const AuthChallenge& challenge,
                                    const std::optional<Credentials>& credentials,
                                    const std::string& what_failed);

  RegistryClientOptions m_options;
  util::HttpClient m_http;
  /// "registry|repository|actions" -> Authorization header value. Never printed.
  std::map<std::string, std::string> m_authorization;
};

// RegistryClient is a facade over the session; its requests (registry_requests.cpp,
// blob_upload.cpp) reach it through Impl.
struct RegistryClient::Impl {
  RegistrySession session;
  explicit Impl(RegistryClientOptions options) : session(std::move(options)) {}
};

} // namespace lume_unlock::oci
