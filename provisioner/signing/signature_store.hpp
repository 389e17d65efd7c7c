#pragma once

#include "oci/digest.hpp"
#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::signing {

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

/// The most simple-signing layers read from one signature manifest, and the largest payload.
inline constexpr std::size_t max_signature_layers = 256;
inline constexpr std::uint64_t max_payload_bytes = 64 * 1024;

/// Reads the signatures of `digest` in `image`'s repository: HEAD/GET of the .sig tag, then each
/// simple-signing layer's payload blob (digest and size checked). Layers of other media types
/// are skipped. Fails (registry) when the registry fails, and (verification) when the manifest
/// holds more than max_signature_layers layers or a payload over max_payload_bytes.
Result<SignatureSet> read_signatures(oci::RegistryClient& registry,
                                     const oci::Reference& image,
                                     const oci::Digest& digest);

/// Pushes `payload` with its base64 signature as one more layer of `existing` (created when the
/// tag has no manifest yet): payload blob, a config listing the layers, then the manifest under
/// the .sig tag. Layers already there are kept as they are. Returns the new manifest's digest.
Result<oci::Digest> append_signature(oci::RegistryClient& registry,
                                     const SignatureSet& existing,
                                     const std::string& payload,
                                     const std::string& signature_base64);

} // namespace lume_unlock::signing
