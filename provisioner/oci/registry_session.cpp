#include "oci/registry_session.hpp"

#include "util/encoding.hpp"
#include "util/json_reader.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace lume_unlock::oci {

namespace {

using util::HttpRequest;
using util::HttpResponse;

std::string host_without_port(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    return std::string(host.substr(0, host.find(']') + 1));
  }
  return std::string(host.substr(0, host.find(':')));
}

std::string scope_key(const RequestTarget& t) {
  return t.ref->registry + "|" + t.ref->repository + "|" + (t.push ? "pull,push" : "pull");
}

util::HttpClientOptions http_options(const RegistryClientOptions& options) {
  util::HttpClientOptions http;
  http.ca_file = options.ca_file;
  return http;
}

std::string basic_authorization(const Credentials& credentials) {
  return "Basic " + util::base64_encode(credentials.username + ":" + credentials.secret);
}

/// The registry's errors[] as "CODE: message; ..." (empty when the body has none).
std::string registry_error_message(const std::string& body) {
  // Read leniently, not with util/json_reader: a hostile or sloppy registry's errors[] must not
  // hide its other entries or the HTTP status (a code that is not a string is left out).
  const nlohmann::json json = util::parse_json(body).value;
  if (!json.is_object() || !json.contains("errors") || !json["errors"].is_array()) {
    return {};
  }
  std::string out;
  for (const auto& entry : json["errors"]) {
    const auto field = [&](const char* key) {
      return entry.is_object() && entry.contains(key) && entry[key].is_string()
                 ? entry[key].get<std::string>()
                 : std::string();
    };
    const std::string code = field("code");
    const std::string message = field("message");
    const std::string item =
        code.empty() || message.empty() ? code + message : code + ": " + message;
    out += out.empty() || item.empty() ? item : "; " + item;
  }
  return util::body_preview(out);
}

} // namespace

std::string RegistryHttpError::why() const {
  std::string out = method + " " + url + " answered HTTP " + std::to_string(status);
  if (!registry_message.empty()) {
    out += ": " + registry_message;
  } else if (!body_preview.empty()) {
    out += ": " + body_preview;
  }
  return out;
}

Error RegistryHttpError::to_error(const std::string& what_failed) const {
  std::string hint;
  if (status == 401 || status == 403) {
    hint = "check access to the repository: set GHCR_USERNAME and GHCR_TOKEN for ghcr.io, or "
           "add the registry to the 'auths' of your Docker config.json";
  } else if (status == 404) {
    hint = "check the repository and tag (skopeo list-tags docker://REPOSITORY lists the tags)";
  } else if (temporary()) {
    hint = "the registry is failing or rate-limiting; retry later";
  }
  return Error(ErrorCategory::registry, what_failed, why(), hint);
}

RegistryHttpError make_http_error(const std::string& method,
                                  const std::string& url,
                                  const util::HttpResponse& response) {
  RegistryHttpError e;
  e.method = method;
  e.url = util::redact_url(url);
  e.status = response.status;
  e.registry_message = registry_error_message(response.body);
  if (e.registry_message.empty()) {
    e.body_preview = util::body_preview(response.body);
  }
  return e;
}

Error transport_error(const std::string& what_failed,
                      const std::string& method,
                      const std::string& url,
                      const util::TransportError& error,
                      const std::string& ca_file) {
  std::string hint;
  switch (error.kind) {
  case util::TransportError::Kind::plain_http:
    return Error(ErrorCategory::usage,
                 what_failed,
                 util::url_host(url) +
                     " speaks plain HTTP; Lume reaches registries over HTTPS only (" + method +
                     " " + util::redact_url(url) + ": " + error.detail + ")",
                 "serve it over TLS with a certificate (docker-registry: http.tls.certificate "
                 "and http.tls.key in its config.yml), trust its CA on the Mac (Keychain) for "
                 "Lume and with --registry-ca FILE, the recipe's registry.ca or SSL_CERT_FILE "
                 "for lume-unlock; --insecure-registry HOST serves lume-unlock's own requests "
                 "only");
  case util::TransportError::Kind::connection_refused:
  case util::TransportError::Kind::resolve:
    hint = "check the registry host and that it is reachable";
    break;
  case util::TransportError::Kind::tls:
    hint = "the registry's TLS certificate did not verify against " +
           (ca_file.empty() ? std::string("the system's CAs") : "the CAs in " + ca_file) +
           "; name the CA that signed it with --registry-ca FILE, the recipe's registry.ca, or "
           "SSL_CERT_FILE";
    break;
  case util::TransportError::Kind::timeout:
    hint = "the registry did not answer in time; retry later";
    break;
  default:
    break;
  }
  return Error(ErrorCategory::registry,
               what_failed,
               method + " " + util::redact_url(url) + " failed: " + error.detail,
               hint);
}

std::optional<std::string> AuthChallenge::param(const std::string& name) const {
  const auto it = params.find(name);
  return it == params.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::optional<AuthChallenge> parse_auth_challenge(std::string_view s) {
  std::size_t i = 0;
  const auto skip_spaces = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) {
      ++i;
    }
  };
  const auto token = [&] { // RFC 7230 tchar*, lower-cased
    std::string out;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) ||
                            std::string_view("!#$%&'*+-.^_`|~").find(s[i]) != s.npos)) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i++])));
    }
    return out;
  };
  skip_spaces();
  AuthChallenge challenge;
  challenge.scheme = token();
  if (challenge.scheme.empty()) {
    return std::nullopt;
  }
  while (true) {
    skip_spaces();
    while (i < s.size() && s[i] == ',') {
      ++i;
      skip_spaces();
    }
    if (i >= s.size()) {
      return challenge;
    }
    const std::string name = token();
    skip_spaces();
    if (name.empty()) {
      return std::nullopt; // garbage where a parameter name belongs
    }
    if (i >= s.size() || s[i] != '=') {
      return challenge; // a second challenge ("Bearer ..., Basic ...") starts here
    }
    ++i;
    skip_spaces();
    std::string& value = challenge.params[name];
    value.clear();
    if (i < s.size() && s[i] == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        i += s[i] == '\\' && i + 1 < s.size() ? 1 : 0;
        value += s[i];
      }
      if (i++ >= s.size()) {
        return std::nullopt; // the quote is not closed
      }
    } else {
      while (i < s.size() && s[i] != ',' && s[i] != ' ' && s[i] != '\t') {
        value += s[i++];
      }
    }
  }
}

std::string with_query(const std::string& url, const std::string& parameter) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + parameter;
}

std::string strip_parameters(const std::string& content_type) {
  return util::trim(content_type.substr(0, content_type.find(';')), " ");
}

RegistrySession::RegistrySession(RegistryClientOptions options)
    : m_options(std::move(options)), m_http(http_options(m_options)) {}

bool RegistrySession::plain_http(const std::string& registry) const {
  for (const auto& host : m_options.insecure_registries) {
    if (host == registry || host == host_without_port(registry)) {
      return true;
    }
  }
  return false;
}

std::string RegistrySession::base_url(const std::string& registry) const {
  return (plain_http(registry) ? "http://" : "https://") + registry;
}

std::string RegistrySession::repository_url(const Reference& ref) const {
  return base_url(ref.registry) + "/v2/" + ref.repository;
}

void RegistrySession::sign(const RequestTarget& target, HttpRequest& request) const {
  auto auth = m_authorization.find(scope_key(target));
  // Credentials go only to the registry itself, never to a redirect or upload host elsewhere.
  if (auth != m_authorization.end() && util::url_host(request.url) == target.ref->registry) {
    request.headers.push_back({"Authorization", auth->second});
  }
}

Status RegistrySession::answer_challenge(const RequestTarget& target,
                                         const HttpResponse& response,
                                         const std::string& request_line,
                                         const std::string& what_failed) {
  auto header = response.header("WWW-Authenticate");
  auto challenge = header ? parse_auth_challenge(*header) : std::nullopt;
  if (!challenge || (challenge->scheme != "bearer" && challenge->scheme != "basic")) {
    return Error(ErrorCategory::registry,
                 what_failed,
                 request_line + " answered HTTP 401 without a usable WWW-Authenticate challenge",
                 "the registry requires authentication it does not describe; check the "
                 "registry URL");
  }
  return authenticate(target, *challenge, what_failed);
}

Result<HttpResponse> RegistrySession::send(const RequestTarget& target,
                                           HttpRequest request,
                                           bool idempotent,
                                           const std::string& what_failed,
                                           const std::function<Status()>& reset) {
  util::Retries retries(m_options.retry);
  bool authenticated_now = false;
  while (true) {
    if (reset) {
      LUME_UNLOCK_TRY(reset());
    }
    HttpRequest signed_request = request;
    sign(target, signed_request);
    auto response = m_http.send(signed_request);
    if (!response) {
      if (idempotent && util::retryable_transport(response.error().kind) &&
          retries.next().verdict == util::Retries::Verdict::retry) {
        continue;
      }
      return transport_error(
          what_failed, request.method, request.url, response.error(), m_options.ca_file);
    }
    HttpResponse& got = response.value();
    if (got.status == 401 && !authenticated_now) {
      LUME_UNLOCK_TRY(answer_challenge(
          target, got, request.method + " " + util::redact_url(request.url), what_failed));
      authenticated_now = true; // answering the challenge is not a failed attempt
      continue;
    }
    if (idempotent && util::retryable_status(got.status) &&
        retries.next(&got).verdict == util::Retries::Verdict::retry) {
      continue;
    }
    return std::move(got);
  }
}

util::DownloadAuth RegistrySession::download_auth(const RequestTarget& target,
                                                  const std::string& what_failed) {
  util::DownloadAuth auth;
  auth.sign = [this, target](HttpRequest& request) {
    auto& headers = request.headers;
    headers.erase(
        std::remove_if(headers.begin(),
                       headers.end(),
                       [](const util::HttpHeader& h) { return h.name == "Authorization"; }),
        headers.end());
    sign(target, request);
  };
  // Tokens expire during long downloads: every 401 is answered (send_download resends once).
  auth.challenge = [this, target, what_failed](const HttpResponse& response) {
    return answer_challenge(target, response, "GET", what_failed);
  };
  return auth;
}

Status RegistrySession::authenticate(const RequestTarget& target,
                                     const AuthChallenge& challenge,
                                     const std::string& what_failed) {
  std::optional<Credentials> credentials;
  if (m_options.credentials) {
    credentials = m_options.credentials->lookup(target.ref->registry);
  }
  if (challenge.scheme == "basic") {
    if (!credentials) {
      return Error(ErrorCategory::registry,
                   what_failed,
                   "the registry '" + target.ref->registry + "' requires a username and password",
                   "add the registry to the 'auths' of your Docker config.json");
    }
    m_authorization[scope_key(target)] = basic_authorization(*credentials);
    return ok_status();
  }
  LUME_UNLOCK_TRY_ASSIGN(auto token, request_token(target, challenge, credentials, what_failed));
  m_authorization[scope_key(target)] = "Bearer " + token;
  return ok_status();
}

Result<std::string> RegistrySession::request_token(const RequestTarget& target,
                                                   const AuthChallenge& challenge,
                                                   const std::optional<Credentials>& credentials,
                                                   const std::string& what_failed) {
  auto realm = challenge.param("realm");
  if (!realm || realm->empty()) {
    return Error(ErrorCategory::registry,
                 what_failed,
                 "the registry's Bearer challenge names no realm",
                 "check the registry URL");
  }
  std::string query;
  if (auto service = challenge.param("service")) {
    query += "service=" + util::percent_encode(*service, "/:,");
  }
  const std::string scope =
      "repository:" + target.ref->repository + ":" + (target.push ? "pull,push" : "pull");
  query += (query.empty() ? "" : "&") + std::string("scope=") + util::percent_encode(scope, "/:,");
  const std::string token_url = with_query(*realm, query);

  HttpRequest request{"GET", token_url};
  request.headers.push_back({"Accept", "application/json"});
  // A token document is a few KiB (a JWT and its lifetime); a larger one is not a token.
  request.max_body_bytes = 1u << 20;
  // Credentials go to the realm only over TLS, to loopback, or to a host declared plain HTTP.
  const bool realm_is_safe = util::starts_with(token_url, "https://") ||
                             util::is_loopback_url(token_url) ||
                             plain_http(util::url_host(token_url));
  if (credentials && realm_is_safe) {
    request.headers.push_back({"Authorization", basic_authorization(*credentials)});
  }
  auto response = m_http.send(request);
  const std::string token_failed =
      what_failed + ": token request to '" + util::redact_url(*realm) + "'";
  if (!response) {
    return transport_error(token_failed, "GET", token_url, response.error(), m_options.ca_file);
  }
  if (response.value().status != 200) {
    return make_http_error("GET", token_url, response.value()).to_error(token_failed);
  }
  auto json = util::parse_json(response.value().body).value;
  if (json.is_object()) {
    for (const char* key : {"token", "access_token"}) {
      if (json.contains(key) && json[key].is_string() && !json[key].get<std::string>().empty()) {
        return json[key].get<std::string>();
      }
    }
  }
  return Error(ErrorCategory::registry,
               token_failed,
               "the answer has no 'token' or 'access_token'",
               "check the registry URL");
}

void RegistrySession::report(const std::string& step,
                             std::uint64_t done,
                             std::uint64_t total,
                             bool finished) {
  if (m_options.progress) {
    util::ProgressEvent event;
    event.step = step;
    event.done = done;
    event.total = total;
    event.unit = "bytes";
    event.finished = finished;
    m_options.progress(event);
  }
}

} // namespace lume_unlock::oci
