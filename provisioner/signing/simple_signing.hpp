#pragma once

#include "oci/digest.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

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

} // namespace lume_unlock::signing
