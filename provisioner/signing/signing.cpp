#include "signing/signing.hpp"

#include "oci/manifest.hpp"
#include "util/atomic_file.hpp"
#include "util/encoding.hpp"
#include "util/json_reader.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>

namespace lume_unlock::signing {

namespace {

Error refused(const oci::Reference& at, const std::string& why) {
  return Error(ErrorCategory::verification,
               "signatures in '" + at.str() + "'",
               why,
               "the signature manifest was not written by cosign or lume-unlock");
}

/// A small blob's bytes: streamed to a scratch file by the client (digest and size checked),
/// read back and removed.
Result<std::string> fetch_small_blob(oci::RegistryClient& registry,
                                     const oci::Reference& repository,
                                     const oci::Descriptor& blob) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("lume-unlock-payload-" + util::random_hex(16)))
          .string();
  LUME_UNLOCK_TRY(registry.download_blob(repository, blob, path));
  auto bytes = util::read_file(path);
  std::remove(path.c_str());
  return bytes;
}

/// The config of a signature manifest: an OCI image config whose rootfs lists the payload
/// layers, as cosign writes it (cosign itself never reads it back).
std::string signature_config(const std::vector<oci::Descriptor>& layers) {
  nlohmann::json diff_ids = nlohmann::json::array();
  for (const auto& layer : layers) {
    diff_ids.push_back(layer.digest.str());
  }
  return nlohmann::json{{"architecture", ""},
                        {"os", ""},
                        {"config", nlohmann::json::object()},
                        {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}}
      .dump();
}

std::string key_list(const std::vector<TrustedKey>& keys) {
  std::string text;
  for (const TrustedKey& trusted : keys) {
    text += (text.empty() ? "" : ", ") + trusted.source + " (" + trusted.key.fingerprint() + ")";
  }
  return text;
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

/// The most simple-signing layers read from one signature manifest, and the largest payload.
constexpr std::size_t k_max_signature_layers = 256;
constexpr std::uint64_t k_max_payload_bytes = 64 * 1024;

/// Reads the signatures of `digest` in `image`'s repository: HEAD/GET of the .sig tag, then each
/// simple-signing layer's payload blob (digest and size checked). Layers of other media types
/// are skipped. Fails (registry) when the registry fails, and (verification) when the manifest
/// holds more than k_max_signature_layers layers or a payload over k_max_payload_bytes.
Result<SignatureSet> read_signatures(oci::RegistryClient& registry,
                                     const oci::Reference& image,
                                     const oci::Digest& digest) {
  SignatureSet set{signature_reference(image, digest), std::nullopt, {}};
  LUME_UNLOCK_TRY_ASSIGN(auto head, registry.find_manifest(set.reference));
  if (!head) {
    return set;
  }
  LUME_UNLOCK_TRY_ASSIGN(oci::FetchedManifest fetched, registry.get_manifest(set.reference));
  if (fetched.manifest.is_index()) {
    return refused(set.reference, "the signature tag names an index, not an image manifest");
  }
  if (fetched.manifest.layers.size() > k_max_signature_layers) {
    return refused(set.reference,
                   "it has " + std::to_string(fetched.manifest.layers.size()) +
                       " layers; at most " + std::to_string(k_max_signature_layers) + " are read");
  }
  for (const oci::Descriptor& layer : fetched.manifest.layers) {
    if (layer.media_type != simple_signing_media_type) {
      continue;
    }
    if (layer.size > k_max_payload_bytes) {
      return refused(set.reference,
                     "payload " + layer.digest.str() + " is " + std::to_string(layer.size) +
                         " bytes; simple-signing payloads are a few hundred");
    }
    LUME_UNLOCK_TRY_ASSIGN(std::string payload, fetch_small_blob(registry, image, layer));
    StoredSignature stored{layer, std::move(payload), std::nullopt};
    if (auto found = layer.annotations.find(signature_annotation);
        found != layer.annotations.end()) {
      stored.signature_der = util::base64_decode(found->second);
    }
    set.signatures.push_back(std::move(stored));
  }
  set.manifest = std::move(fetched.manifest);
  return set;
}

} // namespace

std::string serialize_payload(const SimpleSigningPayload& payload) {
  // nlohmann::json sorts object keys, so the bytes depend on the values only.
  nlohmann::json document = {
      {"critical",
       {{"identity", {{"docker-reference", payload.docker_reference}}},
        {"image", {{"docker-manifest-digest", payload.manifest_digest.str()}}},
        {"type", cosign_signature_type}}}};
  if (payload.optional.is_object() && !payload.optional.empty()) {
    document["optional"] = payload.optional;
  }
  return document.dump();
}

Result<SimpleSigningPayload> parse_payload(std::string_view bytes) {
  const util::JsonDocument payload_document{
      ErrorCategory::verification,
      "signature payload",
      "the signature manifest was not written by cosign or lume-unlock, or was altered"};
  return util::read_json_text(bytes, payload_document, [](const util::JsonValue& value) {
    const util::JsonObject document = value.object();
    const util::JsonObject critical = document.object("critical");
    const util::JsonValue type = critical.at("type", "a string");
    if (type.string() != cosign_signature_type) {
      type.fail(std::string("expected '") + cosign_signature_type + "', got " +
                util::quote_for_message(type.string()));
    }
    const std::string reference = critical.object("identity").string("docker-reference");
    const util::JsonObject image = critical.object("image");
    // The simple-signing format capitalises the key ("Docker-manifest-digest" in its examples);
    // cosign writes it in lower case. Both are read.
    const nlohmann::json& keys = image.value().json();
    const util::JsonValue digest =
        image.at(keys.contains("docker-manifest-digest") || !keys.contains("Docker-manifest-digest")
                     ? "docker-manifest-digest"
                     : "Docker-manifest-digest",
                 "a string");
    auto parsed = oci::Digest::parse(digest.string());
    if (!parsed) {
      digest.fail(parsed.error().why());
    }
    SimpleSigningPayload payload{reference, parsed.value(), {}};
    if (const auto optional = document.find("optional"); optional && optional->json().is_object()) {
      payload.optional = optional->json();
    }
    return payload;
  });
}

std::string signature_tag(const oci::Digest& digest) {
  return std::string(oci::Digest::algorithm()) + "-" + digest.hex() + ".sig";
}

oci::Reference signature_reference(const oci::Reference& image, const oci::Digest& digest) {
  return {image.registry, image.repository, signature_tag(digest), std::nullopt};
}

Result<oci::Digest> append_signature(oci::RegistryClient& registry,
                                     const SignatureSet& existing,
                                     const std::string& payload,
                                     const std::string& signature_base64) {
  LUME_UNLOCK_TRY_ASSIGN(
      oci::Descriptor layer,
      registry.push_blob_bytes(existing.reference, payload, simple_signing_media_type));
  layer.annotations[signature_annotation] = signature_base64;

  oci::Manifest manifest;
  if (existing.manifest) {
    manifest = *existing.manifest; // every layer already there stays, byte for byte
  }
  manifest.schema_version = 2;
  manifest.media_type = oci::media_type::oci_manifest;
  manifest.layers.push_back(layer);
  LUME_UNLOCK_TRY_ASSIGN(oci::Descriptor config,
                         registry.push_blob_bytes(existing.reference,
                                                  signature_config(manifest.layers),
                                                  oci::media_type::oci_config));
  manifest.config = config;
  return registry.push_manifest(
      existing.reference, oci::serialize(manifest), oci::media_type::oci_manifest);
}

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
