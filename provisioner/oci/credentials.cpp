#include "oci/credentials.hpp"

#include "util/atomic_file.hpp"
#include "util/ecdsa_key.hpp"
#include "util/encoding.hpp"
#include "util/json_parse.hpp"

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

Error invalid_config(const std::string& path, const std::string& why) {
  return Error(ErrorCategory::usage,
               "invalid Docker config '" + path + "'",
               why,
               "fix the file or point DOCKER_CONFIG at another directory");
}

} // namespace

EnvironmentReader process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) {
      return std::nullopt;
    }
    return std::string(value);
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
  auto json = util::parse_json(text).value;
  if (json.is_discarded() || !json.is_object()) {
    return invalid_config(path, "not a JSON object");
  }
  DockerConfigCredentials out;
  auto auths = json.find("auths");
  if (auths == json.end()) {
    return out;
  }
  if (!auths->is_object()) {
    return invalid_config(path, "'auths' must be an object");
  }
  for (const auto& [key, entry] : auths->items()) {
    if (!entry.is_object()) {
      return invalid_config(path, "'auths." + key + "' must be an object");
    }
    Credentials credentials;
    if (auto auth = entry.find("auth");
        auth != entry.end() && auth->is_string() && !auth->get<std::string>().empty()) {
      auto decoded = util::base64_decode(auth->get<std::string>());
      auto colon = decoded ? decoded->find(':') : std::string::npos;
      if (colon == std::string::npos) {
        // The value itself is secret: name only the key.
        return invalid_config(path, "'auths." + key + ".auth' is not base64 of 'user:secret'");
      }
      credentials = {decoded->substr(0, colon), decoded->substr(colon + 1)};
    } else if (entry.contains("username") && entry.contains("password") &&
               entry["username"].is_string() && entry["password"].is_string()) {
      credentials = {entry["username"].get<std::string>(), entry["password"].get<std::string>()};
    } else {
      continue; // e.g. an entry served by a credential helper
    }
    out.m_entries.emplace_back(normalize_host(key), std::move(credentials));
  }
  return out;
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
