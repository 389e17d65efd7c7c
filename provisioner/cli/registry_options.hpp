#pragma once

#include "oci/registry_client.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace lume_unlock::cli {

/// The registry flags shared by every command that talks to a registry.
struct RegistryFlags {
  std::vector<std::string> insecure_registries;
  std::string ca_file;
};

/// Adds --insecure-registry HOST (repeatable) and --registry-ca FILE to a subcommand.
void add_registry_flags(CLI::App& command, RegistryFlags& flags);

/// Client options from the flags, with credentials from the environment and Docker config; the
/// CA file is --registry-ca, else SSL_CERT_FILE, else none (the system store). Throws Error
/// when the Docker config is invalid.
oci::RegistryClientOptions registry_client_options(const RegistryFlags& flags);

} // namespace lume_unlock::cli
