// The signing commands: `key generate`, `sign` and `verify-signature` (cosign's layout).
#include "signing/signing.hpp"

#include "cli/commands.hpp"
#include "cli/version.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
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

struct VerifySignatureOptions {
  std::string reference;
  std::vector<std::string> key_files;
  RegistryFlags registry;
};

void run_verify_signature(const VerifySignatureOptions& options, Context& context) {
  oci::Reference ref = oci::parse_reference(options.reference).value_or_throw();
  std::vector<signing::TrustedKey> keys;
  for (const std::string& path : options.key_files) {
    keys.push_back({util::read_public_key_file(path).value_or_throw(), path});
  }
  oci::RegistryClient client(registry_client_options(options.registry));
  // A tag is resolved to the digest it names now; the signature covers that digest only.
  const oci::FetchedManifest fetched = client.get_manifest(ref).value_or_throw();
  const oci::Reference pinned = ref.pinned(fetched.digest);
  const signing::VerifiedSignature verified =
      signing::verify_image_signature(client, pinned, keys).value_or_throw();
  if (context.json()) {
    nlohmann::json document = signing::to_json(verified);
    document["image"] = pinned.str();
    document["verified"] = true;
    document["optional"] = verified.optional;
    context.print_json(document);
    return;
  }
  context.out << "verified " << pinned.str() << '\n'
              << "  signed by " << verified.key_fingerprint << " (" << verified.key_source << ")\n";
  for (const auto& [claim, value] : verified.optional.items()) {
    context.out << "  " << claim << ": "
                << (value.is_string() ? value.get<std::string>() : value.dump()) << '\n';
  }
}

} // namespace

void register_key(CLI::App& app, Context& context) {
  CLI::App* key = app.add_subcommand("key", "Create signing keys for sign, bake and bundle push");
  key->require_subcommand(1);
  auto prefix = std::make_shared<std::string>();
  CLI::App* generate = key->add_subcommand(
      "generate", "Write an ECDSA P-256 key pair: PREFIX.key (private) and PREFIX.pub (public)");
  generate->footer(std::string("PREFIX.key is PKCS#8 PEM, mode 0600; it is encrypted (AES-256, "
                               "PBES2) with the passphrase in ") +
                   util::key_passphrase_variable +
                   " when that variable is set. PREFIX.pub is the public key in the format of "
                   "cosign.pub: give it to `verify-signature --key`, a recipe's trust: block, or "
                   "`cosign verify --key`.");
  generate->add_option("PREFIX", *prefix, "Path prefix of the two files")->required();
  generate->callback([prefix, &context] {
    const std::optional<std::string> passphrase = util::key_passphrase_from_environment();
    const util::KeyPairFiles files = util::write_key_pair(*prefix, passphrase).value_or_throw();
    if (context.json()) {
      context.print_json({{"private_key", files.private_key},
                          {"public_key", files.public_key},
                          {"fingerprint", files.fingerprint},
                          {"encrypted", passphrase.has_value()}});
    } else {
      context.out << "wrote " << files.private_key << " (private, mode 0600, "
                  << (passphrase ? "encrypted" : "not encrypted") << ")\n"
                  << "wrote " << files.public_key << " (public)\n"
                  << "fingerprint " << files.fingerprint << '\n';
      if (!passphrase) {
        context.warn(std::string("the private key is not encrypted; set ") +
                     util::key_passphrase_variable + " to encrypt it");
      }
    }
  });
}

void register_sign(CLI::App& app, Context& context) {
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
  command->callback([options, &context] { run_sign(*options, context); });
}

void register_verify_signature(CLI::App& app, Context& context) {
  auto options = std::make_shared<VerifySignatureOptions>();
  CLI::App* command = app.add_subcommand(
      "verify-signature", "Check that an image or shim bundle is signed by a trusted key");
  command->footer("Reads REF's cosign signatures (tag sha256-<hex>.sig) and accepts REF when one "
                  "of them verifies with any --key and names REF's digest and repository. "
                  "Exit 6 names the reason otherwise: not signed, signed by another key, payload "
                  "digest differs, payload names another repository.\nExample: lume-unlock "
                  "verify-signature registry.example/org/tahoe@sha256:... --key signing.pub");
  command->add_option("REF", options->reference, "[registry/]repository[:tag][@sha256:...]")
      ->required();
  command
      ->add_option(
          "--key", options->key_files, "Trusted public key (PEM); repeatable, any one suffices")
      ->type_name("FILE.pub")
      ->required()
      ->check(CLI::ExistingFile);
  add_registry_flags(*command, options->registry);
  command->callback([options, &context] { run_verify_signature(*options, context); });
}

} // namespace lume_unlock::cli
