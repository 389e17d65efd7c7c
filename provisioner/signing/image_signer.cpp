#include "signing/image_signer.hpp"

#include "signing/signature_store.hpp"
#include "signing/simple_signing.hpp"
#include "util/base64.hpp"

namespace lume_unlock::signing {

Result<SignOutcome> sign_image(oci::RegistryClient& registry,
                               const oci::Reference& image,
                               const util::EcdsaPrivateKey& key,
                               const nlohmann::json& optional) {
  if (!image.digest) {
    return Error(ErrorCategory::usage,
                 "sign '" + image.str() + "'",
                 "a signature covers one manifest digest, and the reference names none",
                 "pin it: lume-unlock resolve '" + image.str() + "' prints REF@sha256:...");
  }
  const oci::Digest digest = *image.digest;
  // The image must exist under that digest in that repository: signing bytes nobody can pull
  // would only mislead.
  LUME_UNLOCK_TRY(registry.get_manifest(image));

  const util::EcdsaPublicKey public_key = key.public_key();
  SignOutcome outcome{
      image, signature_reference(image, digest), public_key.fingerprint(), 0, false};
  LUME_UNLOCK_TRY_ASSIGN(SignatureSet existing, read_signatures(registry, image, digest));
  for (const StoredSignature& stored : existing.signatures) {
    if (!stored.signature_der || !public_key.verify(stored.payload, *stored.signature_der)) {
      continue;
    }
    auto parsed = parse_payload(stored.payload);
    if (parsed && parsed.value().manifest_digest == digest &&
        parsed.value().docker_reference == image.repository_path()) {
      outcome.already_signed = true;
      outcome.signature_count = existing.signatures.size();
      return outcome;
    }
  }

  const std::string payload =
      serialize_payload(SimpleSigningPayload{image.repository_path(), digest, optional});
  LUME_UNLOCK_TRY_ASSIGN(std::string signature, key.sign(payload));
  LUME_UNLOCK_TRY(append_signature(registry, existing, payload, util::base64_encode(signature)));
  outcome.signature_count = existing.signatures.size() + 1;
  return outcome;
}

} // namespace lume_unlock::signing
