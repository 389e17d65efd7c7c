#include "cli/registry_options.hpp"

namespace lume_unlock::cli {

void add_registry_flags(CLI::App& command, RegistryFlags& flags) {
  command
      .add_option("--insecure-registry",
                  flags.insecure_registries,
                  "Reach this registry HOST[:PORT] over plain HTTP (loopback registries always "
                  "are); repeatable")
      ->type_name("HOST");
}

oci::RegistryClientOptions registry_client_options(const RegistryFlags& flags) {
  oci::RegistryClientOptions options;
  options.insecure_registries = flags.insecure_registries;
  options.credentials = oci::default_credentials().value_or_throw();
  return options;
}

} // namespace lume_unlock::cli
