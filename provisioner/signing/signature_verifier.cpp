#include "signing/signature_verifier.hpp"

#include "signing/signature_store.hpp"
#include "signing/simple_signing.hpp"
#include "util/text.hpp"

#include <optional>

namespace lume_unlock::signing {
namespace {

std::string key_list(const std::vector<TrustedKey>& keys) {
  return util::join(keys, ", ", [](const TrustedKey& trusted) {
    return trusted.source + " (" + trusted.key.fingerprint() + ")";
  });
}

Error refusal(const oci::Reference& image, const std::string& why, const std::string& hint) {
  return Error(ErrorCategory::verification, "signature check of '" + image.str() + "'", why, hint);
}

const TrustedKey* signer_of(const StoredSignature& stored, const std::vector<TrustedKey>& keys) {
  if (!stored.signature_der) {
    return nullptr;
  }
  for (const TrustedKey& trusted : keys) {
    if (trusted.key.verify(stored.payload, *stored.signature_der)) {
      return &trusted;
    }
  }
  return nullptr;
}

} // namespace

nlohmann::json to_json(const VerifiedSignature& verified) {
  return {{"key", verified.key_fingerprint},
          {"key_source", verified.key_source},
          {"payload_digest", verified.payload_digest.str()}};
}

Result<VerifiedSignature> verify_image_signature(oci::RegistryClient& registry,
                                                 const oci::Reference& image,
                                                 const std::vector<TrustedKey>& keys) {
  if (!image.digest) {
    return Error(ErrorCategory::usage,
                 "signature check of '" + image.str() + "'",
                 "the reference names no digest, and a signature covers one digest",
                 "pin it: lume-unlock resolve '" + image.str() + "'");
  }
  if (keys.empty()) {
    return Error(ErrorCategory::usage,
                 "signature check of '" + image.str() + "'",
                 "no trusted public key was given",
                 "pass --key FILE.pub, or list keys in the recipe's trust: block");
  }
  const oci::Digest digest = *image.digest;
  LUME_UNLOCK_TRY_ASSIGN(SignatureSet set, read_signatures(registry, image, digest));
  if (set.signatures.empty()) {
    return refusal(image,
                   "not signed: no cosign signature under '" + set.reference.str() + "'",
                   "sign it: lume-unlock sign '" + image.str() + "' --key KEY");
  }
  // The most specific reason among the signatures a trusted key did make.
  std::optional<std::string> other_digest;
  std::optional<std::string> other_repository;
  for (const StoredSignature& stored : set.signatures) {
    const TrustedKey* signer = signer_of(stored, keys);
    if (signer == nullptr) {
      continue;
    }
    auto payload = parse_payload(stored.payload);
    if (!payload) {
      continue; // a trusted key signed something that is no image signature: it vouches for nothing
    }
    if (payload.value().manifest_digest != digest) {
      other_digest = payload.value().manifest_digest.str();
      continue;
    }
    if (payload.value().docker_reference != image.repository_path()) {
      other_repository = payload.value().docker_reference;
      continue;
    }
    return VerifiedSignature{
        signer->key.fingerprint(), signer->source, stored.layer.digest, payload.value().optional};
  }
  if (other_digest) {
    return refusal(image,
                   "payload digest differs from the pinned digest: the trusted key signed " +
                       *other_digest + ", not " + digest.str() +
                       " (a signature copied from another image)",
                   "pull the digest that was signed, or have it signed");
  }
  if (other_repository) {
    return refusal(image,
                   "payload names another repository: signed for '" + *other_repository +
                       "', pulled from '" + image.repository_path() + "'",
                   "pull from the repository that was signed, or sign this one");
  }
  return refusal(image,
                 "signed by another key: none of the " + std::to_string(set.signatures.size()) +
                     " signature(s) verifies with " + key_list(keys) +
                     " (another signer, or an altered payload)",
                 "check which key the publisher signs with");
}

} // namespace lume_unlock::signing
