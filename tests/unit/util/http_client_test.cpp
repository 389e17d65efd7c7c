#include "support/loopback_http_server.hpp"
#include "util/http_client.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace lume_unlock::util {
namespace {

/// A real HTTP server on 127.0.0.1 (cpp-httplib) on a free port.
class LoopbackServer : public test::LoopbackHttpServer {
public:
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port()) + path;
  }
};

TEST(HttpClient, GetsBodyStatusAndHeaders) {
  LoopbackServer s;
  s.server().Get("/hello", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Docker-Content-Digest", "sha256:abc");
    res.set_content("{\"ok\":true}", "application/json");
  });
  HttpClient client;
  auto response = client.send({"GET", s.url("/hello")});
  ASSERT_TRUE(response.ok()) << response.error().detail;
  EXPECT_EQ(response.value().status, 200);
  EXPECT_EQ(response.value().body, "{\"ok\":true}");
  EXPECT_EQ(response.value().header("docker-content-digest"), "sha256:abc");
  EXPECT_EQ(response.value().header("Content-Type"), "application/json");
  EXPECT_EQ(response.value().header("X-Missing"), std::nullopt);
}

TEST(HttpClient, SendsBodiesWithContentLengthForEveryMethod) {
  LoopbackServer s;
  std::string seen;
  auto echo = [&](const httplib::Request& req, httplib::Response& res) {
    seen = req.method + " " + req.get_header_value("Content-Length") + " " + req.body;
    res.status = req.method == "POST" ? 202 : 200;
  };
  s.server().Post("/x", echo);
  s.server().Put("/x", echo);
  s.server().Patch("/x", echo);
  HttpClient client;
  HttpRequest post{"POST", s.url("/x")};
  post.body = "{\"noDisplay\":true}";
  ASSERT_EQ(client.send(post).value().status, 202);
  EXPECT_EQ(seen, "POST 18 {\"noDisplay\":true}");
  HttpRequest empty{"POST", s.url("/x")};
  ASSERT_TRUE(client.send(empty).ok());
  EXPECT_EQ(seen, "POST 0 ");
  HttpRequest patch{"PATCH", s.url("/x")};
  patch.body = "{}";
  ASSERT_TRUE(client.send(patch).ok());
  EXPECT_EQ(seen, "PATCH 2 {}");
}

TEST(HttpClient, StreamsUploadsAndDownloads) {
  LoopbackServer s;
  std::string received;
  s.server().Put("/blob", [&](const httplib::Request& req, httplib::Response& res) {
    received = req.body;
    res.status = 201;
  });
  s.server().Get("/blob", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(received, "application/octet-stream");
  });
  const std::string payload(3 * 1024 * 1024 + 5, 'z');
  std::size_t offset = 0;
  HttpRequest put{"PUT", s.url("/blob")};
  put.body_size = payload.size();
  put.body_reader = [&](char* buffer, std::size_t capacity) {
    std::size_t n = std::min(capacity, payload.size() - offset);
    std::copy_n(payload.data() + offset, n, buffer);
    offset += n;
    return n;
  };
  HttpClient client;
  ASSERT_EQ(client.send(put).value().status, 201);
  EXPECT_EQ(received.size(), payload.size());

  std::size_t streamed = 0;
  HttpRequest get{"GET", s.url("/blob")};
  get.body_sink = [&](std::string_view chunk) {
    streamed += chunk.size();
    return true;
  };
  auto response = client.send(get);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(streamed, payload.size());
  EXPECT_TRUE(response.value().body.empty());
}

TEST(HttpClient, SinkCanAbortTheTransfer) {
  LoopbackServer s;
  s.server().Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(1 << 20, 'a'), "application/octet-stream");
  });
  HttpRequest get{"GET", s.url("/big")};
  get.body_sink = [](std::string_view) { return false; };
  HttpClient client;
  auto response = client.send(get);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind, TransportError::Kind::aborted);
}

TEST(HttpClient, BodiesLongerThanTheLimitAbortNamingIt) {
  LoopbackServer s;
  s.server().Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.status = 500; // an error page too: every body kept in memory is bounded
    res.set_content(std::string(3 << 20, 'a'), "text/plain");
  });
  HttpRequest get{"GET", s.url("/big")};
  get.max_body_bytes = 1 << 20;
  HttpClient client;
  auto response = client.send(get);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind, TransportError::Kind::aborted);
  EXPECT_EQ(response.error().detail, "the response body is larger than the limit of 1 MiB");

  get.max_body_bytes = 3 << 20; // exactly the body's length is within the limit
  response = client.send(get);
  ASSERT_TRUE(response.ok()) << response.error().detail;
  EXPECT_EQ(response.value().body.size(), 3u << 20);
}

TEST(HttpClient, SinkSuccessOnlyKeepsErrorBodiesOutOfTheSink) {
  LoopbackServer s;
  s.server().Get("/missing", [](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content("{\"errors\":[]}", "application/json");
  });
  s.server().Get("/ok", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("payload", "application/octet-stream");
  });
  std::string sunk;
  HttpRequest get{"GET", s.url("/missing")};
  get.body_sink = [&](std::string_view chunk) {
    sunk.append(chunk);
    return true;
  };
  get.sink_success_only = true;
  HttpClient client;
  auto missing = client.send(get);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing.value().status, 404);
  EXPECT_EQ(missing.value().body, "{\"errors\":[]}");
  EXPECT_EQ(sunk, "");
  get.url = s.url("/ok");
  auto ok = client.send(get);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(sunk, "payload");
  EXPECT_EQ(ok.value().body, "");
}

TEST(HttpClient, ConnectionRefusedIsClassified) {
  // Bind a port without listening, so connecting to it is refused.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  HttpClient client;
  auto response = client.send({"GET", "http://127.0.0.1:" + std::to_string(port) + "/"});
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind, TransportError::Kind::connection_refused);
  ::close(fd);
}

TEST(HttpClient, TimeoutIsClassified) {
  LoopbackServer s;
  s.server().Get("/slow", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    res.set_content("late", "text/plain");
  });
  HttpRequest get{"GET", s.url("/slow")};
  get.timeout = std::chrono::milliseconds(100);
  HttpClient client;
  auto response = client.send(get);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind, TransportError::Kind::timeout);
}

TEST(HttpClient, ReusesOneConnectionAcrossRequests) {
  LoopbackServer s;
  std::atomic<int> connections{0};
  std::set<std::string> peers;
  std::mutex mutex;
  s.server().Get("/k", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex);
    peers.insert(req.remote_addr + ":" + std::to_string(req.remote_port));
    res.set_content("k", "text/plain");
  });
  HttpClient client;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(client.send({"GET", s.url("/k")}).ok());
  }
  EXPECT_EQ(peers.size(), 1u) << "each request opened a new connection";
  EXPECT_EQ(client.request_count(), 5u);
}

TEST(RedactUrl, RemovesCredentials) {
  EXPECT_EQ(redact_url("https://user:pw@ghcr.io/v2/a/b/manifests/1"),
            "https://ghcr.io/v2/a/b/manifests/1");
  EXPECT_EQ(redact_url("https://ghcr.io/token?scope=repository:a/b:pull&service=ghcr.io"),
            "https://ghcr.io/token?scope=repository:a/b:pull&service=ghcr.io");
  EXPECT_EQ(redact_url("https://blob.example/x?X-Amz-Signature=abc&part=1&access_token=t0k"),
            "https://blob.example/x?X-Amz-Signature=REDACTED&part=1&access_token=REDACTED");
  EXPECT_EQ(redact_url("http://127.0.0.1:7777"), "http://127.0.0.1:7777");
}

TEST(UrlHost, KeepsThePortAndDropsUserInformation) {
  EXPECT_EQ(url_host("http://user:pw@127.0.0.1:5000/v2/?x=1"), "127.0.0.1:5000");
  EXPECT_EQ(url_host("https://ghcr.io/token?scope=a"), "ghcr.io");
  EXPECT_EQ(url_host("[::1]:5000/v2/"), "[::1]:5000");
}

TEST(Loopback, RecognisesLoopbackHostsOnly) {
  EXPECT_TRUE(is_loopback_url("http://127.0.0.1:5000/v2/"));
  EXPECT_TRUE(is_loopback_url("http://localhost/v2/"));
  EXPECT_TRUE(is_loopback_url("http://[::1]:5000/v2/"));
  EXPECT_TRUE(is_loopback_host("127.0.0.1:5000"));
  EXPECT_FALSE(is_loopback_url("https://ghcr.io/v2/"));
  EXPECT_FALSE(is_loopback_url("http://127.0.0.1.evil.com/"));
  EXPECT_FALSE(is_loopback_url("http://user@192.168.64.2/"));
}

} // namespace
} // namespace lume_unlock::util
