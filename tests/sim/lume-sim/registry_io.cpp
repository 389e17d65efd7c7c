#include "registry_http.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>

namespace lume_sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool is_loopback_host(const std::string& host) {
  const std::string name = host.substr(0, host.rfind(':'));
  return name == "127.0.0.1" || name == "localhost" || name == "[::1]";
}

} // namespace

std::string digest_of(const std::string& bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.finish();
}

std::unique_ptr<httplib::Client> client_for(const RegistryEndpoint& registry) {
  auto c = std::make_unique<httplib::Client>(registry.base_url);
  c->enable_server_certificate_verification(true);
  if (!registry.ca_file.empty()) {
    c->set_ca_cert_path(registry.ca_file.c_str());
  }
  c->set_connection_timeout(10);
  c->set_read_timeout(60);
  c->set_write_timeout(60);
  c->set_keep_alive(true);
  c->set_decompress(false); // Lume sends Accept-Encoding: identity and gunzips itself
  return c;
}

std::string token_for(httplib::Client& c,
                      const RegistryEndpoint& registry,
                      const std::string& repository,
                      const std::string& scopes,
                      const std::optional<std::pair<std::string, std::string>>& credentials) {
  const std::string path =
      "/token?scope=repository:" + repository + ":" + scopes + "&service=" + registry.host;
  httplib::Headers headers{{"Accept", "application/json"}};
  if (credentials) {
    // Basic auth with the environment's credentials (sent on pulls too when set).
    headers.emplace(
        httplib::make_basic_authentication_header(credentials->first, credentials->second));
  }
  auto r = c.Get(path, headers);
  if (!r || r->status != 200) {
    return "";
  }
  json j = json::parse(r->body, nullptr, false);
  if (j.is_object() && j.contains("token") && j["token"].is_string()) {
    return j["token"];
  }
  if (j.is_object() && j.contains("access_token") && j["access_token"].is_string()) {
    return j["access_token"];
  }
  return "";
}

httplib::Headers with_auth(httplib::Headers headers, const std::string& token, bool always) {
  if (!token.empty() || always) {
    headers.emplace("Authorization", "Bearer " + token);
  }
  return headers;
}

std::mt19937_64& rng() {
  static std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

std::string random_mac_address() {
  std::uniform_int_distribution<int> byte(0, 255);
  char buffer[18];
  std::snprintf(buffer,
                sizeof buffer,
                "%02x:%02x:%02x:%02x:%02x:%02x",
                (byte(rng()) & 0xfc) | 0x02,
                byte(rng()),
                byte(rng()),
                byte(rng()),
                byte(rng()),
                byte(rng()));
  return buffer;
}

std::optional<RegistryEndpoint>
registry_endpoint(const ConfiguredRegistry& configured,
                  const std::optional<std::string>& body_registry,
                  const std::optional<std::string>& body_organization,
                  const std::string& ca_file) {
  const ConfiguredRegistry defaults;
  const bool request_overrides = (body_registry && *body_registry != defaults.registry) ||
                                 (body_organization && *body_organization != defaults.organization);
  RegistryEndpoint endpoint;
  endpoint.host =
      request_overrides ? body_registry.value_or(defaults.registry) : configured.registry;
  endpoint.organization = request_overrides ? body_organization.value_or(defaults.organization)
                                            : configured.organization;
  endpoint.base_url = "https://" + endpoint.host;
  endpoint.ca_file = ca_file;
  if (!is_loopback_host(endpoint.host)) {
    return std::nullopt;
  }
  return endpoint;
}

std::optional<std::pair<std::string, std::string>> push_credentials_from_environment() {
  const auto first_set = [](const char* a, const char* b) -> std::optional<std::string> {
    for (const char* name : {a, b}) {
      const char* value = std::getenv(name);
      if (value != nullptr && *value != '\0') {
        return std::string(value);
      }
    }
    return std::nullopt;
  };
  auto user = first_set("GITHUB_USERNAME", "GHCR_USERNAME");
  auto token = first_set("GITHUB_TOKEN", "GHCR_TOKEN");
  if (!user || !token) {
    return std::nullopt;
  }
  return std::make_pair(*user, *token);
}

} // namespace lume_sim
