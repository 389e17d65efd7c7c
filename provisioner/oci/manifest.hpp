#pragma once

#include "oci/reference.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::oci {

// Every media type and annotation key lume-unlock reads or writes, in one place
// (reference/lume-oci.md §3; OCI image-spec; Docker distribution schema 2).
namespace media_type {
// Manifests and indexes.
inline constexpr const char* oci_manifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char* oci_index = "application/vnd.oci.image.index.v1+json";
inline constexpr const char* docker_manifest =
    "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr const char* docker_manifest_list =
    "application/vnd.docker.distribution.manifest.list.v2+json";

// Configs and layers.
inline constexpr const char* oci_config = "application/vnd.oci.image.config.v1+json";
inline constexpr const char* oci_empty = "application/vnd.oci.empty.v1+json";
inline constexpr const char* oci_layer_tar_gzip = "application/vnd.oci.image.layer.v1.tar+gzip";
inline constexpr const char* octet_stream = "application/octet-stream";

// Lume's OCI format (Lume 0.5.3, ImageContainerRegistry.swift).
inline constexpr const char* lume_config = "application/vnd.trycua.lume.config.v1+json";
inline constexpr const char* lume_disk = "application/vnd.trycua.lume.disk.v1";
inline constexpr const char* lume_nvram = "application/vnd.trycua.lume.nvram.v1";

// lume-unlock's own artifacts (DESIGN §4.4).
inline constexpr const char* shim_bundle = "application/vnd.lume-unlock.shim-bundle.v1";
/// The artifact's config blob: bundle.json's bytes exactly as in the archive.
inline constexpr const char* shim_bundle_config =
    "application/vnd.lume-unlock.shim-bundle.config.v1+json";
/// The artifact's one layer: the deterministic lume-unlock-shim-bundle-<version>.tar.gz.
inline constexpr const char* shim_bundle_layer =
    "application/vnd.lume-unlock.shim-bundle.layer.v1.tar+gzip";
} // namespace media_type

/// The Accept list for manifest requests: every manifest and index type we can handle.
inline constexpr const char* manifest_accept =
    "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.v2+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json";

namespace annotation {
inline constexpr const char* title = "org.opencontainers.image.title";
inline constexpr const char* created = "org.opencontainers.image.created";

// Manifest-level (Lume 0.5.3, createOCIManifest).
inline constexpr const char* lume_upload_time = "org.trycua.lume.upload-time";
inline constexpr const char* lume_total_uncompressed_size =
    "org.trycua.lume.total-uncompressed-size";
inline constexpr const char* lume_os = "org.trycua.lume.os";
inline constexpr const char* lume_cpu_count = "org.trycua.lume.cpu-count";
inline constexpr const char* lume_memory_size = "org.trycua.lume.memory-size";
inline constexpr const char* lume_disk_size = "org.trycua.lume.disk-size";
inline constexpr const char* lume_display = "org.trycua.lume.display";
inline constexpr const char* lume_network_mode = "org.trycua.lume.network-mode";

// Disk-chunk layers.
inline constexpr const char* lume_uncompressed_size = "org.trycua.lume.content.uncompressed-size";
inline constexpr const char* lume_uncompressed_digest =
    "org.trycua.lume.content.uncompressed-digest";
inline constexpr const char* lume_part_number = "org.trycua.lume.part.number";
inline constexpr const char* lume_part_total = "org.trycua.lume.part.total";
inline constexpr const char* lume_part_offset = "org.trycua.lume.part.offset";
inline constexpr const char* lume_chunk_size = "org.trycua.lume.chunk.size";

// lume-unlock's manifest-level annotations of a baked image: the bench figures
// ("dev.lume-unlock.bench.pp512.speedup", ...; pipeline::bench_annotations).
inline constexpr const char* lume_unlock_bench_prefix = "dev.lume-unlock.bench.";
} // namespace annotation

using Annotations = std::map<std::string, std::string>;

/// An OCI content descriptor: what a blob or manifest is, where to find it, how big it is.
struct Descriptor {
  std::string media_type;
  Digest digest = Digest::of_bytes("");
  std::uint64_t size = 0;
  std::optional<std::string> artifact_type;
  Annotations annotations;

  friend bool operator==(const Descriptor& a, const Descriptor& b) {
    return a.media_type == b.media_type && a.digest == b.digest && a.size == b.size &&
           a.artifact_type == b.artifact_type && a.annotations == b.annotations;
  }
};

/// An image manifest (config + layers) or an index / manifest list (manifests). Unknown keys
/// are ignored on read; only the fields below are written.
struct Manifest {
  int schema_version = 2;
  std::string media_type;
  std::optional<std::string> artifact_type;
  std::optional<Descriptor> config; ///< absent in indexes
  std::vector<Descriptor> layers;
  std::vector<Descriptor> manifests; ///< only in indexes / manifest lists
  Annotations annotations;

  bool is_index() const;

  friend bool operator==(const Manifest& a, const Manifest& b) {
    return a.schema_version == b.schema_version && a.media_type == b.media_type &&
           a.artifact_type == b.artifact_type && a.config == b.config && a.layers == b.layers &&
           a.manifests == b.manifests && a.annotations == b.annotations;
  }
};

nlohmann::json to_json(const Descriptor& descriptor);
nlohmann::json to_json(const Manifest& manifest);
/// Compact JSON bytes of a manifest; these bytes (not a re-encoding) are what gets hashed and
/// pushed.
std::string serialize(const Manifest& manifest);

/// Parses manifest bytes. Fails (category registry) on bad JSON, a schemaVersion other than 2,
/// or a malformed field, naming the field by its pointer (util/json_reader).
Result<Manifest> parse_manifest(std::string_view bytes);

/// The manifest `bytes` with `added` merged into its manifest-level annotations (a key already
/// there is replaced), every other field kept as received, unknown keys included: the config
/// and layer descriptors are the same JSON values, so they name the same blobs. The result is
/// compact JSON with sorted keys, a new manifest with a new digest. Fails (category registry)
/// on bytes that are not a JSON object or whose annotations are not an object of strings.
Result<std::string> with_manifest_annotations(std::string_view bytes, const Annotations& added);

/// A manifest as received: the exact bytes, their digest (computed by us) and the parse.
struct FetchedManifest {
  std::string bytes;
  Digest digest = Digest::of_bytes("");
  std::string media_type; ///< from Content-Type, else from the body
  Manifest manifest;

  /// A descriptor pointing at this manifest.
  Descriptor descriptor() const;
};

} // namespace lume_unlock::oci
