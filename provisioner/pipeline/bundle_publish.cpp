#include "pipeline/bundle_publish.hpp"

#include "bundle/loader.hpp"
#include "oci/media_types.hpp"
#include "util/atomic_file.hpp"

#include <filesystem>

namespace lume_unlock::pipeline {

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
  auto config =
      registry.push_blob_bytes(ref, config_bytes.value(), oci::media_type::shim_bundle_config);
  if (!config.ok()) {
    return config.error();
  }
  auto layer = registry.push_blob_file(ref, archive, oci::media_type::shim_bundle_layer);
  if (!layer.ok()) {
    return layer.error();
  }
  layer.value().annotations[oci::annotation::title] =
      std::filesystem::path(archive).filename().string();

  PublishedBundle published{ref, oci::Digest::of_bytes(""), loaded.value().manifest().version, {}};
  oci::Manifest& m = published.manifest;
  m.media_type = oci::media_type::oci_manifest;
  m.artifact_type = oci::media_type::shim_bundle;
  m.config = config.value();
  m.layers.push_back(layer.value());
  m.annotations["org.opencontainers.image.version"] = published.version;
  auto digest = registry.push_manifest(ref, oci::serialize(m), oci::media_type::oci_manifest);
  if (!digest.ok()) {
    return digest.error();
  }
  published.digest = digest.value();
  return published;
}

} // namespace lume_unlock::pipeline
