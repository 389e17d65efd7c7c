#pragma once

#include "oci/digest.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::oci {

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
