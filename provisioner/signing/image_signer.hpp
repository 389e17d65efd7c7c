#pragma once

#include "oci/digest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "util/ecdsa_key.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace lume_unlock::signing {

/// What sign_image did.
struct SignOutcome {
  oci::Reference image;            ///< registry/repo@sha256:... that was signed
  oci::Reference signature;        ///< registry/repo:sha256-<hex>.sig
  std::string key_fingerprint;     ///< "sha256:<hex>" of the signer's public key DER
  std::size_t signature_count = 0; ///< simple-signing layers now under the tag
  bool already_signed = false;     ///< this key had signed this digest: nothing was pushed
};

/// Signs the manifest `image` names (it must carry a digest; usage error otherwise) in cosign's
/// layout: the manifest is fetched first (it must exist and hash to the digest), a simple-signing
/// payload for (repository, digest, `optional`) is signed with `key` (ECDSA, SHA-256, DER, base64)
/// and appended as one layer to the manifest under `sha256-<hex>.sig`. Signatures of other keys
/// stay. When a layer there already verifies under `key` for this digest and repository, nothing
/// is pushed (already_signed).
Result<SignOutcome> sign_image(oci::RegistryClient& registry,
                               const oci::Reference& image,
                               const util::EcdsaPrivateKey& key,
                               const nlohmann::json& optional = nlohmann::json::object());

} // namespace lume_unlock::signing
