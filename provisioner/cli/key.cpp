#include "cli/key.hpp"

#include "util/ecdsa_key.hpp"

#include <memory>

namespace lume_unlock::cli {

void register_key(CLI::App& app, Context& context, int& exit_code) {
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
  generate->callback([prefix, &context, &exit_code] {
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
    exit_code = 0;
  });
}

} // namespace lume_unlock::cli
