#include "cli/verify_signature.hpp"

#include "cli/registry_options.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "signing/signing.hpp"
#include "util/ecdsa_key.hpp"

#include <memory>

namespace lume_unlock::cli {

namespace {

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

void register_verify_signature(CLI::App& app, Context& context, int& exit_code) {
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
  command->callback([options, &context, &exit_code] {
    run_verify_signature(*options, context);
    exit_code = 0;
  });
}

} // namespace lume_unlock::cli
