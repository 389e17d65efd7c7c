#include "cli/commands.hpp"
#include "cli/version.hpp"
#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "signing/signing.hpp"
#include "transfer/shim_bundle.hpp"
#include "util/ecdsa_key.hpp"

#include <memory>
#include <optional>

namespace lume_unlock::cli {

namespace {

struct BundlePushOptions {
  std::string archive;
  std::string reference;
  std::string sign_key; ///< --sign-key, empty: unsigned
  RegistryFlags registry;
};

void run_bundle_push(const BundlePushOptions& options, Context& context) {
  oci::Reference ref = oci::parse_reference(options.reference).value_or_throw();
  // The key is read (and decrypted) before anything is pushed: a wrong passphrase costs nothing.
  std::optional<util::EcdsaPrivateKey> key;
  if (!options.sign_key.empty()) {
    key = util::read_private_key_file(options.sign_key).value_or_throw();
  }
  oci::RegistryClient client(registry_client_options(options.registry));
  context.debug("pushing " + options.archive + " to " + client.base_url(ref.registry));
  transfer::PublishedBundle published =
      transfer::publish_bundle(client, options.archive, ref).value_or_throw();
  // Tag and digest together: readable, and the digest is what counts.
  const std::string pinned = ref.str() + "@" + published.digest.str();
  std::optional<signing::SignOutcome> signature;
  if (key) {
    signature = signing::sign_image(client,
                                    ref.pinned(published.digest),
                                    *key,
                                    {{"lume-unlock", k_version},
                                     {"shim_bundle_version", published.version},
                                     {"shim_bundle_digest", published.digest.str()}})
                    .value_or_throw();
  }
  if (context.json()) {
    nlohmann::json signed_by = nullptr;
    if (signature) {
      signed_by = {{"key", signature->key_fingerprint}, {"signature", signature->signature.str()}};
    }
    context.print_json({{"reference", ref.str()},
                        {"digest", published.digest.str()},
                        {"pinned", pinned},
                        {"version", published.version},
                        {"artifact_type", oci::media_type::shim_bundle},
                        {"config", oci::to_json(*published.manifest.config)},
                        {"layer", oci::to_json(published.manifest.layers.front())},
                        {"signed", signed_by}});
    return;
  }
  context.note("published shim bundle " + published.version + " as " + ref.str());
  if (signature) {
    context.note("signed with " + signature->key_fingerprint + ": " + signature->signature.str());
  }
  context.out << pinned << '\n';
}

} // namespace

void register_bundle_push(CLI::App& app, Context& context) {
  CLI::App* bundle = app.add_subcommand("bundle", "Work with shim bundles");
  bundle->require_subcommand(1);
  auto options = std::make_shared<BundlePushOptions>();
  CLI::App* command =
      bundle->add_subcommand("push", "Publish a shim bundle archive as an OCI artifact");
  command->footer(
      std::string("The artifact: artifactType ") + oci::media_type::shim_bundle +
      ", config = bundle.json (" + oci::media_type::shim_bundle_config +
      "), one layer = the archive (" + oci::media_type::shim_bundle_layer +
      "). The archive is verified against bundle.json first. Prints REF@sha256:… for a recipe "
      "to pin.\nExample: lume-unlock bundle push lume-unlock-shim-bundle-0.1.0.tar.gz "
      "ghcr.io/acme/lume-unlock-shim:0.1.0");
  command->add_option("ARCHIVE", options->archive, "lume-unlock-shim-bundle-<version>.tar.gz")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("REF", options->reference, "[registry/]repository:tag")->required();
  command
      ->add_option("--sign-key",
                   options->sign_key,
                   "Sign the pushed artifact with this key (cosign layout; passphrase from "
                   "LUME_UNLOCK_KEY_PASSPHRASE)")
      ->type_name("FILE")
      ->check(CLI::ExistingFile);
  add_registry_flags(*command, options->registry);
  command->callback([options, &context] { run_bundle_push(*options, context); });
}

} // namespace lume_unlock::cli
