#include "http_client.hpp"

#include "util/size.hpp"
#include "util/text.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <utility>

namespace lume_unlock::util {

namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

struct Transfer {
  CURL* curl = nullptr;
  const HttpRequest* request = nullptr;
  HttpResponse* response = nullptr;
  std::size_t upload_offset = 0;
  bool sink_aborted = false;
  bool sink_started = false;
  bool body_too_large = false;
};

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  if (starts_with(line, "HTTP/")) {
    // A new status line (after a redirect or a 100 Continue): keep only the final headers.
    transfer->response->headers.clear();
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    transfer->response->headers.push_back(
        {trim(line.substr(0, colon)), trim(line.substr(colon + 1))});
  }
  return size * count;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  std::string_view chunk(data, size * count);
  HttpResponse& head = *transfer->response;
  curl_easy_getinfo(transfer->curl, CURLINFO_RESPONSE_CODE, &head.status);
  const HttpRequest& request = *transfer->request;
  if (request.body_sink && (!request.sink_success_only || head.status / 100 == 2)) {
    const bool first = !std::exchange(transfer->sink_started, true);
    transfer->sink_aborted = (first && request.on_sink_start && !request.on_sink_start(head)) ||
                             !request.body_sink(chunk);
  } else if (head.body.size() + chunk.size() > request.max_body_bytes) {
    transfer->body_too_large = true;
  } else {
    head.body.append(chunk);
  }
  // Less than the chunk makes libcurl abort with CURLE_WRITE_ERROR.
  return transfer->sink_aborted || transfer->body_too_large ? 0 : chunk.size();
}

std::size_t on_upload(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t capacity = size * count;
  if (transfer->request->body_reader) {
    return transfer->request->body_reader(buffer, capacity);
  }
  const std::string& body = transfer->request->body;
  std::size_t n = std::min(capacity, body.size() - transfer->upload_offset);
  std::copy_n(body.data() + transfer->upload_offset, n, buffer);
  transfer->upload_offset += n;
  return n;
}

TransportError::Kind classify(CURLcode code) {
  switch (code) {
  case CURLE_COULDNT_CONNECT:
    return TransportError::Kind::connection_refused;
  case CURLE_OPERATION_TIMEDOUT:
    return TransportError::Kind::timeout;
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
    return TransportError::Kind::resolve;
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_PEER_FAILED_VERIFICATION:
  case CURLE_SSL_CERTPROBLEM:
  case CURLE_SSL_CACERT_BADFILE:
    return TransportError::Kind::tls;
  case CURLE_UNSUPPORTED_PROTOCOL:
    return TransportError::Kind::protocol;
  case CURLE_ABORTED_BY_CALLBACK:
  case CURLE_WRITE_ERROR:
  case CURLE_READ_ERROR:
    return TransportError::Kind::aborted;
  default:
    return TransportError::Kind::other;
  }
}

bool method_has_body(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH";
}

} // namespace

struct HttpClient::Handle {
  CURL* curl = nullptr;
  ~Handle() {
    if (curl != nullptr) {
      curl_easy_cleanup(curl);
    }
  }
};

std::optional<std::string> HttpResponse::header(std::string_view name) const {
  for (auto it = headers.rbegin(); it != headers.rend(); ++it) {
    if (iequals(it->name, name)) {
      return it->value;
    }
  }
  return std::nullopt;
}

HttpClient::HttpClient(HttpClientOptions options)
    : m_handle(std::make_unique<Handle>()), m_options(std::move(options)) {
  global_init_once();
  m_handle->curl = curl_easy_init();
}

HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;

namespace {

/// Timeouts, redirects, TLS trust and the schemes allowed, also after a redirect.
void set_connection_options(CURL* curl,
                            const HttpRequest& request,
                            const HttpClientOptions& options) {
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "lume-unlock");
  curl_easy_setopt(
      curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
  if (request.timeout.count() > 0) {
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  } else {
    curl_easy_setopt(
        curl, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(request.stall_bytes_per_second));
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(request.stall_window.count()));
  }
  if (!request.bearer_token.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    curl_easy_setopt(curl, CURLOPT_XOAUTH2_BEARER, request.bearer_token.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, request.follow_redirects ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options.ca_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, options.ca_file.c_str());
  }
  // Only http(s), also after redirects.
  const char* protocols = request.https_only ? "https" : "http,https";
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, protocols);
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, protocols);
}

/// The request's headers for CURLOPT_HTTPHEADER; the caller frees the list.
curl_slist* header_list_of(const HttpRequest& request) {
  curl_slist* list = nullptr;
  bool has_content_type = false;
  for (const auto& h : request.headers) {
    has_content_type = has_content_type || iequals(h.name, "Content-Type");
    list = curl_slist_append(list, (h.name + ": " + h.value).c_str());
  }
  // Lume does not handle "Expect: 100-continue"; registries do not need it.
  list = curl_slist_append(list, "Expect:");
  if (!has_content_type && method_has_body(request.method)) {
    list = curl_slist_append(list, "Content-Type:");
  }
  return list;
}

/// The method, the body's source and size, and the buffer sizes of streaming transfers.
void set_method_options(CURL* curl, const HttpRequest& request, Transfer& transfer) {
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (method_has_body(request.method)) {
    const curl_off_t size = request.body_reader
                                ? static_cast<curl_off_t>(request.body_size.value_or(0))
                                : static_cast<curl_off_t>(request.body.size());
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_upload);
    curl_easy_setopt(curl, CURLOPT_READDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, size);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  } else if (request.method != "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  // Streaming transfers (blobs) move hundreds of MiB: larger buffers mean fewer callbacks and
  // syscalls. Small requests keep libcurl's defaults.
  if (request.body_sink) {
    curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, 512L * 1024);
  }
  if (request.body_reader) {
    curl_easy_setopt(curl, CURLOPT_UPLOAD_BUFFERSIZE, 512L * 1024);
  }
}

/// What a failed curl_easy_perform means, in the request's terms.
TransportError transport_error(CURLcode code,
                               const Transfer& transfer,
                               const HttpRequest& request,
                               const char* error_buffer) {
  TransportError error;
  error.kind = transfer.sink_aborted || transfer.body_too_large ? TransportError::Kind::aborted
                                                                : classify(code);
  error.detail = error_buffer[0] != '\0' ? std::string(error_buffer) : curl_easy_strerror(code);
  // OpenSSL reads a plain-HTTP answer ("HTTP/1.1 400 …") as a TLS record of an unknown
  // version; libcurl passes its words on. No other cause gives that failure on a handshake.
  if (code == CURLE_SSL_CONNECT_ERROR &&
      error.detail.find("wrong version number") != std::string::npos) {
    error.kind = TransportError::Kind::plain_http;
  }
  if (error.kind == TransportError::Kind::timeout && request.timeout.count() == 0) {
    error.kind = TransportError::Kind::stalled; // no deadline: only the stall limit times out
    error.detail = "the transfer stalled: below " + std::to_string(request.stall_bytes_per_second) +
                   " bytes/s for " + std::to_string(request.stall_window.count()) + " s (" +
                   error.detail + ")";
  }
  if (transfer.body_too_large) {
    error.detail =
        "the response body is larger than the limit of " + describe_limit(request.max_body_bytes);
  }
  return error;
}

} // namespace

Result<HttpResponse, TransportError> HttpClient::send(const HttpRequest& request) {
  CURL* curl = m_handle->curl;
  if (curl == nullptr) {
    return TransportError{TransportError::Kind::other, "libcurl could not create a handle"};
  }
  // Reset options but keep the connection cache, so keep-alive works across requests.
  curl_easy_reset(curl);
  ++m_request_count;

  HttpResponse response;
  Transfer transfer;
  transfer.curl = curl;
  transfer.request = &request;
  transfer.response = &response;

  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  set_connection_options(curl, request, m_options);
  curl_slist* header_list = header_list_of(request);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, header_list);
  set_method_options(curl, request, transfer);

  CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(header_list);
  if (code != CURLE_OK) {
    return transport_error(code, transfer, request, error_buffer);
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

namespace {

bool is_secret_parameter(std::string_view key) {
  static const char* const k_secret_keys[] = {"token",
                                              "access_token",
                                              "password",
                                              "secret",
                                              "signature",
                                              "sig",
                                              "x-amz-signature",
                                              "x-amz-credential",
                                              "x-amz-security-token"};
  for (const char* secret : k_secret_keys) {
    if (iequals(key, secret)) {
      return true;
    }
  }
  return false;
}

} // namespace

std::string redact_url(std::string_view url) {
  const auto scheme = url.find("://");
  std::string out(url.substr(0, scheme == std::string_view::npos ? 0 : scheme + 3));
  out += url_host(url);
  std::string_view rest = url.substr(scheme == std::string_view::npos ? 0 : scheme + 3);
  const auto path = rest.find_first_of("/?#");
  rest = path == std::string_view::npos ? std::string_view() : rest.substr(path);
  const auto query = rest.find('?');
  out.append(rest.substr(0, query));
  if (query == std::string_view::npos) {
    return out;
  }
  std::string_view params = rest.substr(query + 1);
  params = params.substr(0, params.find('#'));
  out.push_back('?');
  for (bool first = true; !params.empty(); first = false) {
    const auto amp = params.find('&');
    const std::string_view param = params.substr(0, amp);
    params = amp == std::string_view::npos ? std::string_view() : params.substr(amp + 1);
    const auto eq = param.find('=');
    out.append(first ? "" : "&");
    if (eq != std::string_view::npos && is_secret_parameter(param.substr(0, eq))) {
      out.append(param.substr(0, eq)).append("=REDACTED");
    } else {
      out.append(param);
    }
  }
  return out;
}

bool is_loopback_host(std::string_view host) {
  // Strip a port: "[::1]:5000", "127.0.0.1:5000", "localhost".
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    host = host.substr(1, close == std::string_view::npos ? host.size() - 1 : close - 1);
  } else if (auto colon = host.rfind(':');
             colon != std::string_view::npos && host.find(':') == colon) {
    host = host.substr(0, colon);
  }
  if (iequals(host, "localhost") || host == "::1") {
    return true;
  }
  if (!starts_with(host, "127.")) {
    return false;
  }
  // 127.a.b.c with numeric octets only.
  int dots = 0;
  for (char c : host) {
    if (c == '.') {
      ++dots;
    } else if (!std::isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return dots == 3;
}

std::string url_host(std::string_view url) {
  auto scheme = url.find("://");
  if (scheme != std::string_view::npos) {
    url.remove_prefix(scheme + 3);
  }
  url = url.substr(0, url.find_first_of("/?#"));
  if (auto at = url.rfind('@'); at != std::string_view::npos) {
    url.remove_prefix(at + 1);
  }
  return std::string(url);
}

bool is_loopback_url(std::string_view url) {
  return is_loopback_host(url_host(url));
}

} // namespace lume_unlock::util
