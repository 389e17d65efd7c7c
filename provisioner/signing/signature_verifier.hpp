#pragma once

#include "oci/digest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "util/ecdsa_key.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace lume_unlock::signing {

/// A public key that may vouch for images, and where it came from (for messages).
struct TrustedKey {
  util::EcdsaPublicKey key;
  std::string source; ///< "keys/release.pub", "recipe trust.keys[1] (inline)"
};

/// The signature that vouched for an image.
struct VerifiedSignature {
  std::string key_fingerprint; ///< "sha256:<hex>" of the public key DER
  std::string key_source;
  oci::Digest payload_digest; ///< of the simple-signing payload blob that was verified
  nlohmann::json optional;    ///< the payload's optional claims (our provenance summary)
};

nlohmann::json to_json(const VerifiedSignature& verified);

/// Checks that `image` (which must carry a digest) has, under its `sha256-<hex>.sig` tag, a
/// simple-signing payload whose signature verifies with one of `keys`, whose
/// docker-manifest-digest is the image's digest and whose docker-reference is the image's
/// repository. Any one such signature suffices. Otherwise fails with category verification
/// (exit 6) and the most specific reason:
///   - "payload digest differs": a trusted key signed another digest (a copied signature);
///   - "payload names another repository": a trusted key signed this digest for another repo;
///   - "signed by another key": signatures exist, none verifies with a trusted key (this is also
///     what an altered payload looks like);
///   - "not signed": no signature tag or no simple-signing layer in it.
/// Registry failures keep category registry (exit 4).
Result<VerifiedSignature> verify_image_signature(oci::RegistryClient& registry,
                                                 const oci::Reference& image,
                                                 const std::vector<TrustedKey>& keys);

} // namespace lume_unlock::signing
