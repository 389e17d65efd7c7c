#pragma once

#include "guest/ssh_session.hpp"
#include "oci/registry_client.hpp"
#include "recipe/recipe.hpp"
#include "util/http_client.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

// The flags several commands share: the guest connection and the registries.
namespace lume_unlock::cli {

/// Adds the guest connection flags of DESIGN §9 to `command`, bound to `options`: --ssh-user,
/// --ssh-port (1-65535), --ssh-password-env and --ssh-accept-new-host-key, in the help group
/// "Guest connection".
void add_connection_options(CLI::App& command, guest::ConnectionOptions& options);

/// The registry flags shared by every command that talks to a registry.
struct RegistryFlags {
  std::vector<std::string> insecure_registries;
  std::string ca_file;
};

/// Adds --insecure-registry HOST (repeatable) and --registry-ca FILE to a subcommand.
void add_registry_flags(CLI::App& command, RegistryFlags& flags);

/// Client options from the flags, with credentials from the environment and Docker config; the
/// CA file is --registry-ca, else the recipe's registry.ca (when a recipe is given), else
/// SSL_CERT_FILE, else none (the system store). Throws Error when the Docker config is invalid
/// or the recipe's CA file is missing.
oci::RegistryClientOptions registry_client_options(const RegistryFlags& flags,
                                                   const recipe::Recipe* recipe = nullptr);

/// The HTTPS client options for a recipe's install: artifacts: TLS verified against the same CA
/// file as the registries (--registry-ca, registry.ca, SSL_CERT_FILE), never plain HTTP.
util::HttpClientOptions artifact_http_options(const oci::RegistryClientOptions& registry);

} // namespace lume_unlock::cli
