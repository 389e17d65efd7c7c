#pragma once

// lume-sim's registry side: Lume 0.5.3's OCI pull and push (reference/lume-oci.md §2-§4), done
// with cpp-httplib, OpenSSL and zlib -- deliberately not with lume-unlock's own registry client,
// so the simulator checks our client instead of agreeing with it.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace lume_sim {

/// A pull or push failure; what() is the message Lume would report (sticky "Pull failed for
/// '<key>': <what>" for pulls, a log line for pushes).
struct RegistryFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The registry block of Lume's config.yaml (Settings.swift; lume-sim's --registry and
/// --registry-organization).
struct ConfiguredRegistry {
  std::string registry = "ghcr.io";
  std::string organization = "trycua";
};

/// Where Lume would send its requests: always https://<registry>/... (ImageContainerRegistry
/// .swift builds every URL that way; there is no plain-HTTP mode), verified against `ca_file`
/// (lume-sim's --registry-ca, standing in for the Mac's keychain; empty: OpenSSL's defaults).
struct RegistryEndpoint {
  std::string base_url;     ///< "https://127.0.0.1:5000"
  std::string host;         ///< "127.0.0.1:5000" (the token `service`)
  std::string organization; ///< the repository is <organization>/<name>
  std::string ca_file;
};

/// RegistryFactory.createRegistry: the request's registry/organization when either differs from
/// the defaults ghcr.io/trycua, else the configured ones. nullopt when the chosen registry is
/// not on loopback (lume-sim never leaves the host; the pull then fails like a refused manifest
/// fetch).
std::optional<RegistryEndpoint>
registry_endpoint(const ConfiguredRegistry& configured,
                  const std::optional<std::string>& body_registry,
                  const std::optional<std::string>& body_organization,
                  const std::string& ca_file);

/// Push credentials as getCredentialsFromEnvironment reads them: GITHUB_USERNAME else
/// GHCR_USERNAME, GITHUB_TOKEN else GHCR_TOKEN. nullopt when either is missing.
std::optional<std::pair<std::string, std::string>> push_credentials_from_environment();

/// Lume's OCI-format pull of <repository>:<tag> into `staging` (disk.img, nvram.bin,
/// config.json with a random MAC). Returns the manifest digest exactly as Docker-Content-Digest
/// said. `progress` gets 0-100 after each blob; `pace` is slept after each blob (the simulator's
/// --pull-delay-ms spread over the download).
std::string pull_oci_image(const RegistryEndpoint& registry,
                           const std::string& repository,
                           const std::string& tag,
                           const std::filesystem::path& staging,
                           const std::function<void(double)>& progress,
                           std::chrono::milliseconds pace);

/// Lume's OCI-format push of the VM in `vm_dir` to <repository>:<tag> for every tag: config
/// blob, nvram layer, gzip disk chunks of `chunk_bytes` (identical chunks uploaded once), a
/// fresh org.trycua.lume.upload-time each push.
void push_oci_image(const RegistryEndpoint& registry,
                    const std::pair<std::string, std::string>& credentials,
                    const std::string& repository,
                    const std::vector<std::string>& tags,
                    const std::filesystem::path& vm_dir,
                    std::uint64_t chunk_bytes);

/// The simulator's one random engine (MAC addresses, VNC passwords, staging names).
std::mt19937_64& rng();

/// Random "aa:bb:cc:dd:ee:ff", locally administered (pulls, create and clone).
std::string random_mac_address();

} // namespace lume_sim
