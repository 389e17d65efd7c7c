#include "transfer/bundle_publish.hpp"

#include "bundle/loader.hpp"
#include "oci/media_types.hpp"
#include "util/atomic_file.hpp"

#include <filesystem>

namespace lume_unlock::transfer {

Result<PublishedBundle> publish_bundle(oci::RegistryClient& registry,
                                       const std::string& archive,
                                       const oci::Reference& ref) {
  const std::string what = "bundle push of '" + archive + "' to '" + ref.str() + "'";
  if (ref.digest || !ref.tag) {
    return Error(ErrorCategory::usage,
                 what,
                 "the reference must name a tag and no digest",
                 "e.g. lume-unlock bundle push " + archive + " " + ref.repository_path() + ":1.0");
  }
  auto loaded = bundle::load_bundle_archive(archive);
  if (!loaded.ok()) {
    return loaded.error().with_context(what);
  }
  // The config is bundle.json's bytes as shipped, not a re-encoding.
  auto config_bytes = util::read_file(loaded.value().root() + "/bundle.json");
  if (!config_bytes.ok()) {
    return config_bytes.error().with_context(what);
  }
  LUME_UNLOCK_TRY_ASSIGN(
      auto config,
      registry.push_blob_bytes(ref, config_bytes.value(), oci::media_type::shim_bundle_config));
  LUME_UNLOCK_TRY_ASSIGN(auto layer,
                         registry.push_blob_file(ref, archive, oci::media_type::shim_bundle_layer));
  layer.annotations[oci::annotation::title] = std::filesystem::path(archive).filename().string();

  PublishedBundle published{ref, oci::Digest::of_bytes(""), loaded.value().manifest().version, {}};
  oci::Manifest& m = published.manifest;
  m.media_type = oci::media_type::oci_manifest;
  m.artifact_type = oci::media_type::shim_bundle;
  m.config = config;
  m.layers.push_back(layer);
  m.annotations["org.opencontainers.image.version"] = published.version;
  LUME_UNLOCK_TRY_ASSIGN(
      auto digest, registry.push_manifest(ref, oci::serialize(m), oci::media_type::oci_manifest));
  published.digest = digest;
  return published;
}

} // namespace lume_unlock::transfer
