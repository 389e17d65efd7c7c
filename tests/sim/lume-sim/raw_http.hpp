#pragma once

// One raw HTTP/1.1 exchange over a plain socket, for lume-sim's self-tests (not our Lume client).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>

namespace lume_sim_test {

using nlohmann::json;

struct RawResponse {
  int status = 0;
  std::map<std::string, std::string> headers; ///< names lower-cased
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string("<absent>") : it->second;
  }
  json json_body() const { return json::parse(body); }
};

/// One request on a fresh connection; the request line and target are sent byte for byte.
inline RawResponse
raw(int port, const std::string& method, const std::string& target, const std::string& body = {}) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    ADD_FAILURE() << "cannot connect to lume-sim";
    return {};
  }
  std::string request = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (method == "POST" || method == "PATCH" || method == "PUT" || !body.empty()) {
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "Connection: close\r\n\r\n" + body;
  (void)!send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof buffer, 0)) > 0) {
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  RawResponse r;
  auto head_end = text.find("\r\n\r\n");
  if (head_end == std::string::npos) {
    return r;
  }
  std::istringstream head(text.substr(0, head_end));
  std::string line;
  std::getline(head, line);
  r.status = std::stoi(line.substr(9, 3));
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    auto colon = line.find(':');
    std::string name = line.substr(0, colon);
    for (char& c : name) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    r.headers[name] = line.substr(colon + 2);
  }
  r.body = text.substr(head_end + 4);
  return r;
}

} // namespace lume_sim_test
