#pragma once

#include "util/result.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::oci {

/// A username and secret (password or token) for one registry. Never printed or logged.
struct Credentials {
  std::string username;
  std::string secret;
};

/// Where registry credentials come from (environment, Docker config, ...).
class CredentialSource {
public:
  virtual ~CredentialSource() = default;
  /// Credentials for `registry` ("ghcr.io", "127.0.0.1:5000"), or nullopt for anonymous.
  virtual std::optional<Credentials> lookup(const std::string& registry) const = 0;
};

/// Reads an environment variable; injectable for tests.
using EnvironmentReader = std::function<std::optional<std::string>(const std::string& name)>;
EnvironmentReader process_environment();

/// GHCR_USERNAME or GITHUB_USERNAME plus GHCR_TOKEN or GITHUB_TOKEN (the names Lume reads),
/// for ghcr.io only: a GitHub token is never sent to any other host.
class EnvironmentCredentials : public CredentialSource {
public:
  explicit EnvironmentCredentials(EnvironmentReader env = process_environment());
  std::optional<Credentials> lookup(const std::string& registry) const override;

private:
  EnvironmentReader m_env;
};

/// The `auths` of a Docker config.json: `{"auths": {"HOST": {"auth": base64(user:secret)}}}` or
/// `{"username": ..., "password": ...}`. Keys may carry a scheme or path
/// ("https://ghcr.io/v1/"). Credential helpers (credsStore, credHelpers) are not consulted.
class DockerConfigCredentials : public CredentialSource {
public:
  /// Parses config.json text; fails (category usage) naming `path` when it is not valid.
  static Result<DockerConfigCredentials> parse(const std::string& text, const std::string& path);
  /// Reads $DOCKER_CONFIG/config.json, else ~/.docker/config.json; a missing file means no
  /// credentials, an unreadable or invalid one is an error.
  static Result<DockerConfigCredentials> load(const EnvironmentReader& env = process_environment());

  std::optional<Credentials> lookup(const std::string& registry) const override;

private:
  std::vector<std::pair<std::string, Credentials>> m_entries; ///< normalized host -> credentials
};

/// Asks each source in order; the first answer wins.
class ChainedCredentials : public CredentialSource {
public:
  explicit ChainedCredentials(std::vector<std::shared_ptr<const CredentialSource>> sources);
  std::optional<Credentials> lookup(const std::string& registry) const override;

private:
  std::vector<std::shared_ptr<const CredentialSource>> m_sources;
};

/// The default order: environment, then Docker config. Fails only on an invalid config.json.
Result<std::shared_ptr<const CredentialSource>>
default_credentials(const EnvironmentReader& env = process_environment());

} // namespace lume_unlock::oci
