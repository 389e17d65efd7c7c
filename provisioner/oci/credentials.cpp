#include "oci/registry_client.hpp"
#include "util/atomic_file.hpp"
#include "util/ecdsa_key.hpp"
#include "util/encoding.hpp"
#include "util/json_reader.hpp"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cstdlib>

namespace lume_unlock::oci {

namespace {

std::optional<std::string> first_set(const EnvironmentReader& env,
                                     std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (auto value = env(name); value && !value->empty()) {
      return value;
    }
  }
  return std::nullopt;
}

/// "https://ghcr.io/v1/" -> "ghcr.io"
std::string normalize_host(std::string key) {
  if (auto scheme = key.find("://"); scheme != std::string::npos) {
    key = key.substr(scheme + 3);
  }
  return key.substr(0, key.find('/'));
}

} // namespace

EnvironmentReader process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    return value == nullptr ? std::nullopt : std::optional<std::string>(value);
  };
}

EnvironmentCredentials::EnvironmentCredentials(EnvironmentReader env) : m_env(std::move(env)) {}

std::optional<Credentials> EnvironmentCredentials::lookup(const std::string& registry) const {
  if (registry != "ghcr.io") {
    return std::nullopt;
  }
  auto username = first_set(m_env, {"GHCR_USERNAME", "GITHUB_USERNAME"});
  auto token = first_set(m_env, {"GHCR_TOKEN", "GITHUB_TOKEN"});
  if (!username || !token) {
    return std::nullopt;
  }
  return Credentials{*username, *token};
}

Result<DockerConfigCredentials> DockerConfigCredentials::parse(const std::string& text,
                                                               const std::string& path) {
  const util::JsonDocument config{ErrorCategory::usage,
                                  "invalid Docker config '" + path + "'",
                                  "fix the file or point DOCKER_CONFIG at another directory"};
  const util::JsonParsed parsed = util::parse_json(text);
  if (!parsed.ok()) {
    // nlohmann's reason quotes the bytes it stopped at, which may be a secret: give only where.
    return util::json_shape_error(config, {"", "not valid JSON", ""});
  }
  return util::read_json(parsed.value, config, [](const util::JsonValue& value) {
    DockerConfigCredentials out;
    const auto auths = value.object().find("auths");
    if (!auths) {
      return out;
    }
    for (const auto& [key, item] : auths->object().members()) {
      const util::JsonObject entry = item.object();
      Credentials credentials;
      if (const auto auth = entry.find("auth"); auth && !auth->string().empty()) {
        auto decoded = util::base64_decode(auth->string());
        auto colon = decoded ? decoded->find(':') : std::string::npos;
        if (colon == std::string::npos) {
          auth->fail("not base64 of 'user:secret'"); // the value itself is secret: not shown
        }
        credentials = {decoded->substr(0, colon), decoded->substr(colon + 1)};
      } else if (entry.has("username") && entry.has("password")) {
        credentials = {entry.string("username"), entry.string("password")};
      } else {
        continue; // e.g. an entry served by a credential helper
      }
      out.m_entries.emplace_back(normalize_host(key), std::move(credentials));
    }
    return out;
  });
}

Result<DockerConfigCredentials> DockerConfigCredentials::load(const EnvironmentReader& env) {
  std::string path;
  if (auto dir = env("DOCKER_CONFIG"); dir && !dir->empty()) {
    path = *dir + "/config.json";
  } else if (auto home = env("HOME"); home && !home->empty()) {
    path = *home + "/.docker/config.json";
  } else {
    return DockerConfigCredentials();
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return DockerConfigCredentials();
  }
  constexpr std::size_t k_max_docker_config_bytes = 4u << 20;
  LUME_UNLOCK_TRY_ASSIGN(
      auto text, util::read_input_file(path, k_max_docker_config_bytes, "the Docker config"));
  LUME_UNLOCK_TRY_ASSIGN(auto config, parse(text, path));
  if (!config.m_entries.empty()) {
    // Docker and Podman write it 0600; a readable copy leaks the registry secrets it holds.
    LUME_UNLOCK_TRY(util::require_owner_only(path, "Docker config with registry credentials"));
  }
  return config;
}

std::optional<Credentials> DockerConfigCredentials::lookup(const std::string& registry) const {
  for (const auto& [host, credentials] : m_entries) {
    if (host == registry) {
      return credentials;
    }
  }
  return std::nullopt;
}

ChainedCredentials::ChainedCredentials(std::vector<std::shared_ptr<const CredentialSource>> sources)
    : m_sources(std::move(sources)) {}

std::optional<Credentials> ChainedCredentials::lookup(const std::string& registry) const {
  for (const auto& source : m_sources) {
    if (auto found = source->lookup(registry)) {
      return found;
    }
  }
  return std::nullopt;
}

Result<std::shared_ptr<const CredentialSource>> default_credentials(const EnvironmentReader& env) {
  LUME_UNLOCK_TRY_ASSIGN(auto docker, DockerConfigCredentials::load(env));
  std::vector<std::shared_ptr<const CredentialSource>> sources = {
      std::make_shared<EnvironmentCredentials>(env),
      std::make_shared<DockerConfigCredentials>(std::move(docker))};
  return std::shared_ptr<const CredentialSource>(
      std::make_shared<ChainedCredentials>(std::move(sources)));
}

} // namespace lume_unlock::oci
