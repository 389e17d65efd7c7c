#pragma once

#include "cli/context.hpp"
#include "guest/ssh_session.hpp"
#include "oci/registry_client.hpp"
#include "recipe/recipe.hpp"
#include "util/http_client.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

// The command list, and the flags several commands share: the guest connection and the
// registries.
namespace lume_unlock::cli {

/// Adds every command to `app`. Each command's callback runs it with `context`; one whose exit
/// code is not 0 when it returns (6 on drift, a remote command's status) sets
/// `context.exit_status`.
void register_commands(CLI::App& app, Context& context);

// One per command, in the order --help shows them (the synopsis is the command's --help; DESIGN
// §9 has the flags and exit codes).
void register_create(CLI::App& app, Context& context);
void register_clone(CLI::App& app, Context& context);
void register_pull(CLI::App& app, Context& context);
void register_status(CLI::App& app, Context& context);
void register_verify(CLI::App& app, Context& context);
void register_remove(CLI::App& app, Context& context);
void register_allow(CLI::App& app, Context& context);
void register_exec(CLI::App& app, Context& context);
void register_ssh(CLI::App& app, Context& context);
void register_bench(CLI::App& app, Context& context);
void register_report(CLI::App& app, Context& context);
void register_bake(CLI::App& app, Context& context);
void register_lock(CLI::App& app, Context& context);
void register_resolve(CLI::App& app, Context& context);
void register_doctor(CLI::App& app, Context& context);
void register_inspect_log(CLI::App& app, Context& context);
void register_bundle_push(CLI::App& app, Context& context);
void register_key(CLI::App& app, Context& context);
void register_sign(CLI::App& app, Context& context);
void register_verify_signature(CLI::App& app, Context& context);
/// The hidden `completions bash|zsh`: the script generated from `app`'s own command and option
/// tables (the build writes it, `cmake --install` installs it).
void register_completions(CLI::App& app, Context& context);

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
