#include "support/artifact_server.hpp"

#include <httplib.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <optional>

namespace lume_unlock::test {

namespace {

constexpr std::size_t k_chunk = 1 << 16;

bool all_digits(const std::string& text) {
  return !text.empty() && text.size() < 20 &&
         text.find_first_not_of("0123456789") == std::string::npos;
}

/// "bytes=N-" (a resuming single stream) or "bytes=N-M" (a chunk of a parallel download); nullopt
/// for anything else (suffix ranges, lists), which is then ignored as RFC 9110 §14.2 allows.
struct ByteRange {
  std::uint64_t first = 0;
  std::optional<std::uint64_t> last;
};
std::optional<ByteRange> parse_range(const std::string& value) {
  constexpr std::string_view k_prefix = "bytes=";
  const auto dash = value.find('-');
  if (value.compare(0, k_prefix.size(), k_prefix) != 0 || dash == std::string::npos) {
    return std::nullopt;
  }
  const auto first = value.substr(k_prefix.size(), dash - k_prefix.size());
  const auto last = value.substr(dash + 1);
  if (!all_digits(first) || (!last.empty() && !all_digits(last))) {
    return std::nullopt;
  }
  ByteRange range{std::stoull(first), std::nullopt};
  if (!last.empty()) {
    range.last = std::stoull(last);
    if (*range.last < range.first) {
      return std::nullopt;
    }
  }
  return range;
}

} // namespace

std::unique_ptr<ArtifactServer> ArtifactServer::start(const TestCa& ca, std::string& why_not) {
  std::unique_ptr<ArtifactServer> server(new ArtifactServer());
  server->m_server = std::make_unique<httplib::SSLServer>(ca.server_certificate().c_str(),
                                                          ca.server_key().c_str());
  if (!server->m_server->is_valid()) {
    why_not = "cpp-httplib could not load the test CA's server certificate";
    return nullptr;
  }
  server->install_handler();
  server->m_port = server->m_server->bind_to_any_port("127.0.0.1");
  if (server->m_port <= 0) {
    why_not = "cannot bind a loopback port";
    return nullptr;
  }
  auto* raw = server->m_server.get();
  server->m_thread = std::thread([raw] { raw->listen_after_bind(); });
  while (!raw->is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return server;
}

ArtifactServer::~ArtifactServer() {
  m_stopping = true; // ends a trickling body
  if (m_server) {
    m_server->stop();
  }
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

void ArtifactServer::serve_bytes(const std::string& path, std::string bytes) {
  std::lock_guard<std::mutex> lock(m_mutex);
  Content content;
  content.size = bytes.size();
  content.bytes = std::move(bytes);
  content.etag = "\"v" + std::to_string(++m_generation) + "\"";
  m_contents[path] = std::move(content);
}

void ArtifactServer::serve_file(const std::string& path, const std::string& file_path) {
  std::lock_guard<std::mutex> lock(m_mutex);
  Content content;
  content.file_path = file_path;
  int fd = open(file_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    content.size = static_cast<std::uint64_t>(lseek(fd, 0, SEEK_END));
    close(fd);
  }
  content.etag = "\"v" + std::to_string(++m_generation) + "\"";
  m_contents[path] = std::move(content);
}

void ArtifactServer::redirect(const std::string& path, const std::string& location) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_redirects[path] = location.rfind("/", 0) == 0 ? url(location) : location;
}

void ArtifactServer::publish_release_asset(const std::string& path,
                                           std::string bytes,
                                           unsigned uses) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_release_assets[path] = {std::move(bytes), uses};
}

std::uint64_t ArtifactServer::requests_for(const std::string& path) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  const auto found = m_path_requests.find(path);
  return found == m_path_requests.end() ? 0 : found->second;
}

void ArtifactServer::publish_hub_file(const std::string& path,
                                      const std::string& sha256,
                                      std::uint64_t size,
                                      const std::string& cdn_url,
                                      const std::string& required_token) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_hub_files[path] = {sha256, size, cdn_url, required_token};
}

void ArtifactServer::stall_after(std::uint64_t bytes, unsigned times) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_stall_after = bytes;
  m_stalls_left = times;
}

void ArtifactServer::answer_busy(int status,
                                 unsigned retry_after_seconds,
                                 unsigned times,
                                 unsigned skip) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_busy_skip = skip;
  m_busy_status = status;
  m_busy_retry_after = retry_after_seconds;
  m_busy_left = times;
}

std::vector<std::string> ArtifactServer::authorizations() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_authorizations;
}

std::string ArtifactServer::etag(const std::string& path) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  const auto found = m_contents.find(path);
  return found == m_contents.end() ? std::string() : found->second.etag;
}

void ArtifactServer::drop_after(std::uint64_t bytes, unsigned times) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_drop_after = bytes;
  m_drops_left = times;
}

void ArtifactServer::serve_wrong_bytes(bool on) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_wrong_bytes = on;
}

void ArtifactServer::ignore_if_range(bool on) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_ignore_if_range = on;
}

void ArtifactServer::ignore_range(bool on) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_ignore_range = on;
}

std::string ArtifactServer::url(const std::string& path) const {
  return "https://127.0.0.1:" + std::to_string(m_port) + path;
}

std::vector<std::string> ArtifactServer::range_headers() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_ranges;
}

std::vector<std::string> ArtifactServer::if_range_headers() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_if_ranges;
}

void ArtifactServer::replace_after(const std::string& path, unsigned requests, std::string bytes) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_replacements[path] = {requests, std::move(bytes)};
}

bool ArtifactServer::answer_hub_file(const httplib::Request& request, httplib::Response& response) {
  const auto hub = m_hub_files.find(request.path);
  if (hub == m_hub_files.end()) {
    return false;
  }
  const HubFile& file = hub->second;
  if (!file.required_token.empty() &&
      request.get_header_value("Authorization") != "Bearer " + file.required_token) {
    response.status = 401;
    response.set_content("{\"error\":\"Access to model is restricted. You must have access to it "
                         "and be authenticated to access it. Please log in.\"}",
                         "application/json");
    return true;
  }
  response.status = 302;
  response.set_header("Location", file.cdn_url);
  response.set_header("X-Linked-Size", std::to_string(file.size));
  response.set_header("X-Linked-Etag", "\"" + file.sha256 + "\"");
  // The commit the path's revision names (here always a commit: resolve/<commit>/<file>).
  const std::string::size_type resolve = request.path.find("/resolve/");
  if (resolve != std::string::npos) {
    const std::string::size_type start = resolve + std::string("/resolve/").size();
    response.set_header("X-Repo-Commit",
                        request.path.substr(start, request.path.find('/', start) - start));
  }
  response.set_header("ETag", "\"" + file.sha256 + "\"");
  return true;
}

bool ArtifactServer::answer_before_content(const httplib::Request& request,
                                           httplib::Response& response) {
  if (m_busy_left > 0 && m_busy_skip > 0) {
    --m_busy_skip;
  } else if (m_busy_left > 0) {
    --m_busy_left;
    response.status = m_busy_status;
    response.set_header("Retry-After", std::to_string(m_busy_retry_after));
    response.set_content("rate limited\n", "text/plain");
    return true;
  }
  if (answer_hub_file(request, response)) {
    return true;
  }
  if (auto asset = m_release_assets.find(request.path); asset != m_release_assets.end()) {
    const std::string signed_path = "/release-assets/" + std::to_string(++m_signatures);
    Content content;
    content.size = asset->second.bytes.size();
    content.bytes = asset->second.bytes;
    content.etag = "\"asset-" + std::to_string(asset->second.bytes.size()) + "\"";
    m_contents[signed_path] = std::move(content);
    m_signed_uses[signed_path] = asset->second.uses;
    response.status = 302;
    response.set_header("Location",
                        url(signed_path) + "?X-Amz-Expires=300&X-Amz-Signature=" +
                            std::to_string(m_signatures * 7919u) + "f00d");
    return true;
  }
  if (auto uses = m_signed_uses.find(request.path); uses != m_signed_uses.end()) {
    if (uses->second == 0) {
      response.status = 403;
      response.set_content("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied"
                           "</Code><Message>Request has expired</Message></Error>",
                           "application/xml");
      return true;
    }
    --uses->second;
  }
  if (auto redirect = m_redirects.find(request.path); redirect != m_redirects.end()) {
    response.status = 302;
    response.set_header("Location", redirect->second);
    return true;
  }
  return false;
}

void ArtifactServer::install_handler() {
  m_server->Get(".*", [this](const httplib::Request& request, httplib::Response& response) {
    ++m_requests;
    // This server answers ranges itself (including the fault of ignoring them): httplib must
    // not apply them a second time after the handler returns.
    const_cast<httplib::Request&>(request).ranges.clear();

    std::unique_lock<std::mutex> lock(m_mutex);
    const bool has_range = request.has_header("Range");
    if (has_range) {
      m_ranges.push_back(request.get_header_value("Range"));
      m_if_ranges.push_back(request.get_header_value("If-Range"));
    }
    m_authorizations.push_back(request.path + " " + request.get_header_value("Authorization"));
    const auto seen = ++m_path_requests[request.path];
    if (auto replacement = m_replacements.find(request.path);
        replacement != m_replacements.end() && seen > replacement->second.after) {
      Content content;
      content.size = replacement->second.bytes.size();
      content.bytes = std::move(replacement->second.bytes);
      content.etag = "\"v" + std::to_string(++m_generation) + "\"";
      m_contents[request.path] = std::move(content);
      m_replacements.erase(replacement);
    }
    if (answer_before_content(request, response)) {
      return;
    }
    auto found = m_contents.find(request.path);
    if (found == m_contents.end()) {
      response.status = 404;
      response.set_content("not found\n", "text/plain");
      return;
    }
    const Content content = found->second;
    response.set_header("ETag", content.etag);
    // If-Range naming other bytes than these: the whole body (RFC 9110 §13.1.5).
    const bool same_file = m_ignore_if_range || !request.has_header("If-Range") ||
                           request.get_header_value("If-Range") == content.etag;
    std::uint64_t start = 0;
    std::uint64_t end = content.size; // one past the last byte sent
    if (has_range && !m_ignore_range && same_file) {
      auto wanted = parse_range(request.get_header_value("Range"));
      if (wanted && wanted->first >= content.size) {
        response.status = 416;
        response.set_header("Content-Range", "bytes */" + std::to_string(content.size));
        return;
      }
      if (wanted) {
        start = wanted->first;
        end = std::min(content.size, wanted->last.value_or(content.size - 1) + 1);
        response.status = 206;
        response.set_header("Content-Range",
                            "bytes " + std::to_string(start) + "-" + std::to_string(end - 1) + "/" +
                                std::to_string(content.size));
      }
    }
    if (response.status != 206) {
      response.status = 200;
    }
    // A fault applies to a body long enough to reach it (a one-byte range probe never does).
    Fault fault;
    if (m_drops_left > 0 && end - start > m_drop_after) {
      --m_drops_left;
      fault.drop_at = m_drop_after;
    }
    if (m_stalls_left > 0 && end - start > m_stall_after) {
      --m_stalls_left;
      fault.stall_at = m_stall_after;
    }
    fault.wrong = m_wrong_bytes;
    lock.unlock();
    provide_body(response, content, start, end, fault);
  });
}

void ArtifactServer::provide_body(httplib::Response& response,
                                  const Content& content,
                                  std::uint64_t start,
                                  std::uint64_t end,
                                  const Fault& fault) {
  const std::uint64_t length = end - start;
  response.set_content_provider(
      static_cast<std::size_t>(length),
      "application/octet-stream",
      [this, content, start, fault, sent = std::uint64_t(0)](
          std::size_t offset, std::size_t wanted, httplib::DataSink& sink) mutable {
        std::size_t n = std::min(wanted, k_chunk);
        if (fault.drop_at) {
          if (sent >= *fault.drop_at) {
            return false; // closes the connection mid-body
          }
          n = static_cast<std::size_t>(std::min<std::uint64_t>(n, *fault.drop_at - sent));
        }
        if (fault.stall_at) {
          if (sent >= *fault.stall_at) {
            // A byte every 250 ms, far below any stall limit, until the client gives up.
            if (m_stopping || sent - *fault.stall_at >= 240) {
              return false;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
            n = 1;
          } else {
            n = static_cast<std::size_t>(std::min<std::uint64_t>(n, *fault.stall_at - sent));
          }
        }
        auto chunk = read_chunk(content, start + offset, n);
        if (!chunk) {
          return false;
        }
        if (fault.wrong) {
          for (auto& c : *chunk) {
            c = static_cast<char>(c ^ 0x5a);
          }
        }
        if (!sink.write(chunk->data(), chunk->size())) {
          return false;
        }
        sent += chunk->size();
        m_body_bytes += chunk->size();
        return true;
      });
}

std::optional<std::string>
ArtifactServer::read_chunk(const Content& content, std::uint64_t at, std::size_t n) {
  if (content.file_path.empty()) {
    return content.bytes.substr(static_cast<std::size_t>(at), n);
  }
  std::string chunk(n, '\0');
  int fd = open(content.file_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::nullopt;
  }
  auto got = pread(fd, chunk.data(), n, static_cast<off_t>(at));
  close(fd);
  if (got <= 0) {
    return std::nullopt;
  }
  chunk.resize(static_cast<std::size_t>(got));
  return chunk;
}

} // namespace lume_unlock::test
