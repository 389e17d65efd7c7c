#include "cli/commands.hpp"

#include <cstdlib>

namespace lume_unlock::cli {

// The one list of commands (one file per command under cli/), in the order --help shows them.
// A command is added here once it really works, so --help never advertises what does not run.
void register_commands(CLI::App& app, Context& context) {
  register_create(app, context);
  register_clone(app, context);
  register_pull(app, context);
  register_status(app, context);
  register_verify(app, context);
  register_remove(app, context);
  register_allow(app, context);
  register_exec(app, context);
  register_bench(app, context);
  register_report(app, context);
  register_ssh(app, context);
  register_bake(app, context);
  register_lock(app, context);
  register_resolve(app, context);
  register_doctor(app, context);
  register_inspect_log(app, context);
  register_bundle_push(app, context);
  register_key(app, context);
  register_sign(app, context);
  register_verify_signature(app, context);
  register_completions(app, context); // hidden: generates shell completion from this list
}

void add_connection_options(CLI::App& command, guest::ConnectionOptions& options) {
  command.add_option("--ssh-user", options.user, "Guest user to log in as")
      ->capture_default_str()
      ->group("Guest connection");
  command.add_option("--ssh-port", options.port, "Guest SSH port")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535))
      ->group("Guest connection");
  command
      .add_option("--ssh-password-env",
                  options.password_env,
                  "Environment variable holding the guest password for the first login (when "
                  "unset, the image default 'lume'); never pass passwords on the command line")
      ->capture_default_str()
      ->group("Guest connection");
  command
      .add_flag("--ssh-accept-new-host-key",
                options.accept_new_host_key,
                "Pin the guest's host key even if it differs from the one pinned before (after "
                "recreating the VM)")
      ->group("Guest connection");
}

void add_registry_flags(CLI::App& command, RegistryFlags& flags) {
  command
      .add_option("--insecure-registry",
                  flags.insecure_registries,
                  "Reach this registry HOST[:PORT] over plain HTTP, for lume-unlock's own "
                  "requests only (Lume reaches registries over HTTPS alone, so a pull or push "
                  "through Lume refuses it); repeatable")
      ->type_name("HOST");
  command
      .add_option("--registry-ca",
                  flags.ca_file,
                  "Trust registry certificates signed by the CAs in this PEM file instead of the "
                  "system store (default: the recipe's registry.ca, else $SSL_CERT_FILE)")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
}

oci::RegistryClientOptions registry_client_options(const RegistryFlags& flags,
                                                   const recipe::Recipe* recipe) {
  oci::RegistryClientOptions options;
  options.insecure_registries = flags.insecure_registries;
  options.ca_file = flags.ca_file;
  if (options.ca_file.empty() && recipe != nullptr) {
    options.ca_file = recipe::registry_ca_file(*recipe).value_or_throw().value_or("");
  }
  if (const char* from_environment = std::getenv("SSL_CERT_FILE");
      options.ca_file.empty() && from_environment != nullptr) {
    options.ca_file = from_environment;
  }
  options.credentials = oci::default_credentials().value_or_throw();
  return options;
}

util::HttpClientOptions artifact_http_options(const oci::RegistryClientOptions& registry) {
  util::HttpClientOptions options;
  options.ca_file = registry.ca_file;
  return options;
}

} // namespace lume_unlock::cli
