#include "cli/sign.hpp"

#include "cli/registry_options.hpp"
#include "cli/version.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "signing/signing.hpp"
#include "util/ecdsa_key.hpp"

#include <memory>

namespace lume_unlock::cli {

namespace {

struct SignOptions {
  std::string reference;
  std::string key_file;
  RegistryFlags registry;
};

void run_sign(const SignOptions& options, Context& context) {
  const oci::Reference ref = oci::parse_reference(options.reference).value_or_throw();
  const util::EcdsaPrivateKey key = util::read_private_key_file(options.key_file).value_or_throw();
  oci::RegistryClient client(registry_client_options(options.registry));
  const signing::SignOutcome outcome =
      signing::sign_image(client, ref, key, {{"lume-unlock", k_version}}).value_or_throw();
  if (context.json()) {
    context.print_json({{"image", outcome.image.str()},
                        {"signature", outcome.signature.str()},
                        {"key", outcome.key_fingerprint},
                        {"signatures", outcome.signature_count},
                        {"already_signed", outcome.already_signed}});
    return;
  }
  if (outcome.already_signed) {
    context.out << outcome.image.str() << " is already signed by " << outcome.key_fingerprint
                << "; nothing pushed\n";
    return;
  }
  context.out << "signed " << outcome.image.str() << " with " << outcome.key_fingerprint << '\n'
              << "pushed " << outcome.signature.str() << " (" << outcome.signature_count
              << " signature" << (outcome.signature_count == 1 ? "" : "s") << ")\n";
}

} // namespace

void register_sign(CLI::App& app, Context& context, int& exit_code) {
  auto options = std::make_shared<SignOptions>();
  CLI::App* command = app.add_subcommand(
      "sign", "Sign an image or shim bundle in a registry (cosign-compatible signature)");
  command->footer(std::string("Appends one simple-signing layer to REF's sha256-<hex>.sig "
                              "manifest; other signers' layers stay. The key's passphrase, if "
                              "any, is read from ") +
                  util::key_passphrase_variable +
                  ".\nExample: lume-unlock sign registry.example/org/tahoe@sha256:... --key "
                  "signing.key");
  command->add_option("REF", options->reference, "registry/repository@sha256:...")->required();
  command
      ->add_option("--key",
                   options->key_file,
                   "ECDSA P-256 private key in PKCS#8 PEM (BEGIN PRIVATE KEY or BEGIN ENCRYPTED "
                   "PRIVATE KEY), as `lume-unlock key generate` writes; convert a SEC1 'EC "
                   "PRIVATE KEY' with openssl pkcs8 -topk8")
      ->type_name("FILE")
      ->required()
      ->check(CLI::ExistingFile);
  add_registry_flags(*command, options->registry);
  command->callback([options, &context, &exit_code] {
    run_sign(*options, context);
    exit_code = 0;
  });
}

} // namespace lume_unlock::cli
