#include "cli/resolve.hpp"

#include "cli/registry_options.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"

#include <memory>

namespace lume_unlock::cli {

namespace {

struct ResolveOptions {
  std::string reference;
  RegistryFlags registry;
};

void run_resolve(const ResolveOptions& options, Context& context) {
  oci::Reference ref = oci::parse_reference(options.reference).value_or_throw();
  oci::RegistryClient client(registry_client_options(options.registry));
  context.debug("resolving " + ref.str() + " via " + client.base_url(ref.registry));
  oci::FetchedManifest fetched = client.get_manifest(ref).value_or_throw();
  if (context.json()) {
    context.print_json({{"reference", ref.str()},
                        {"digest", fetched.digest.str()},
                        {"media_type", fetched.media_type},
                        {"size", fetched.bytes.size()},
                        {"pinned", ref.pinned(fetched.digest).str()}});
  } else {
    context.out << fetched.digest.str() << '\n';
  }
}

} // namespace

void register_resolve(CLI::App& app, Context& context, int& exit_code) {
  auto options = std::make_shared<ResolveOptions>();
  CLI::App* command =
      app.add_subcommand("resolve", "Print the verified manifest digest of an image reference");
  command->footer("The digest is computed from the manifest bytes and checked against the "
                  "registry's Docker-Content-Digest.\nExample: lume-unlock resolve "
                  "ghcr.io/trycua/macos-tahoe-cua:latest");
  command->add_option("REF", options->reference, "[registry/]repository[:tag][@sha256:...]")
      ->required();
  add_registry_flags(*command, options->registry);
  command->callback([options, &context, &exit_code] {
    run_resolve(*options, context);
    exit_code = 0;
  });
}

} // namespace lume_unlock::cli
