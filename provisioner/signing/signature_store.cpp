#include "signing/signature_store.hpp"

#include "oci/media_types.hpp"
#include "signing/simple_signing.hpp"
#include "util/atomic_file.hpp"
#include "util/base64.hpp"
#include "util/random_id.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

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

} // namespace

std::string signature_tag(const oci::Digest& digest) {
  return std::string(oci::Digest::algorithm()) + "-" + digest.hex() + ".sig";
}

oci::Reference signature_reference(const oci::Reference& image, const oci::Digest& digest) {
  oci::Reference ref{image.registry, image.repository, signature_tag(digest), std::nullopt};
  return ref;
}

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
  if (fetched.manifest.layers.size() > max_signature_layers) {
    return refused(set.reference,
                   "it has " + std::to_string(fetched.manifest.layers.size()) +
                       " layers; at most " + std::to_string(max_signature_layers) + " are read");
  }
  for (const oci::Descriptor& layer : fetched.manifest.layers) {
    if (layer.media_type != simple_signing_media_type) {
      continue;
    }
    if (layer.size > max_payload_bytes) {
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

} // namespace lume_unlock::signing
