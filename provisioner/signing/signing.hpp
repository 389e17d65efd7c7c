#pragma once

#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "util/ecdsa_key.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::signing {

/// The media type of a simple-signing payload layer (cosign specs/SIGNATURE_SPEC.md).
inline constexpr const char* simple_signing_media_type =
    "application/vnd.dev.cosign.simplesigning.v1+json";
/// critical.type of every cosign image signature.
inline constexpr const char* cosign_signature_type = "cosign container image signature";
/// The layer annotation that carries the base64 DER signature.
inline constexpr const char* signature_annotation = "dev.cosignproject.cosign/signature";

/// What a signature says (Red Hat's "simple signing" JSON as cosign uses it): this manifest
/// digest, in this repository, plus free-form claims that the signature also covers.
struct SimpleSigningPayload {
  std::string docker_reference; ///< "registry/repository", no tag or digest (as cosign writes)
  oci::Digest manifest_digest;  ///< critical.image.docker-manifest-digest
  nlohmann::json optional = nlohmann::json::object(); ///< lume-unlock's provenance summary

  friend bool operator==(const SimpleSigningPayload& a, const SimpleSigningPayload& b) {
    return a.docker_reference == b.docker_reference && a.manifest_digest == b.manifest_digest &&
           a.optional == b.optional;
  }
};

/// The payload bytes that get signed and pushed: compact JSON, keys in a fixed order. An empty
/// `optional` is left out.
std::string serialize_payload(const SimpleSigningPayload& payload);

/// Parses payload bytes. Fails (category verification) naming the field when the JSON is not a
/// cosign image signature: critical.type other than cosign_signature_type, a missing
/// docker-reference, a missing or malformed docker-manifest-digest.
Result<SimpleSigningPayload> parse_payload(std::string_view bytes);

/// cosign's tag-based discovery: the signatures of `sha256:<hex>` live under the tag
/// `sha256-<hex>.sig` of the same repository.
std::string signature_tag(const oci::Digest& digest);
/// `image` (which must carry a digest) -> the reference of its signature tag.
oci::Reference signature_reference(const oci::Reference& image, const oci::Digest& digest);

/// One signature: a simple-signing layer of the signature manifest, its payload bytes (fetched
/// and checked against the layer's digest) and the DER bytes of its signature annotation
/// (nullopt when the annotation is missing or not base64).
struct StoredSignature {
  oci::Descriptor layer;
  std::string payload;
  std::optional<std::string> signature_der;
};

/// The signature manifest of one image as found in the registry.
struct SignatureSet {
  oci::Reference reference;                ///< registry/repo:sha256-<hex>.sig
  std::optional<oci::Manifest> manifest;   ///< nullopt: the tag does not exist (not signed)
  std::vector<StoredSignature> signatures; ///< simple-signing layers, in manifest order
};

/// Pushes `payload` with its base64 signature as one more layer of `existing` (created when the
/// tag has no manifest yet): payload blob, a config listing the layers, then the manifest under
/// the .sig tag. Layers already there are kept as they are. Returns the new manifest's digest.
Result<oci::Digest> append_signature(oci::RegistryClient& registry,
                                     const SignatureSet& existing,
                                     const std::string& payload,
                                     const std::string& signature_base64);

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
