#include "oci/manifest.hpp"

#include "util/json_reader.hpp"

namespace lume_unlock::oci {

namespace {

using util::JsonObject;
using util::JsonValue;

Annotations read_annotations(const JsonObject& object) {
  Annotations out;
  if (const auto annotations = object.find("annotations")) {
    for (const auto& [key, value] : annotations->object().members()) {
      out[key] = value.string();
    }
  }
  return out;
}

Descriptor read_descriptor(const JsonValue& value) {
  const JsonObject object = value.object();
  Descriptor d;
  d.media_type = object.string("mediaType");
  const JsonValue digest_text = object.at("digest", "a string");
  auto digest = Digest::parse(digest_text.string());
  if (!digest) {
    digest_text.fail(digest.error().why());
  }
  d.digest = digest.value();
  d.size = object.unsigned_integer("size");
  d.artifact_type = object.optional_string("artifactType");
  d.annotations = read_annotations(object);
  return d;
}

std::vector<Descriptor> read_descriptors(const JsonObject& object, const char* key) {
  std::vector<Descriptor> out;
  if (const auto list = object.find(key)) {
    for (const JsonValue& item : list->array()) {
      out.push_back(read_descriptor(item));
    }
  }
  return out;
}

Manifest read_manifest(const JsonValue& value) {
  const JsonObject object = value.object();
  const JsonValue version = object.at("schemaVersion", "2");
  if (!version.json().is_number_integer() || version.json().get<std::int64_t>() != 2) {
    version.fail("expected 2, got " + version.json().dump());
  }
  Manifest m;
  m.schema_version = 2;
  m.media_type = object.optional_string("mediaType").value_or("");
  m.artifact_type = object.optional_string("artifactType");
  if (const auto config = object.find("config")) {
    m.config = read_descriptor(*config);
  }
  m.layers = read_descriptors(object, "layers");
  m.manifests = read_descriptors(object, "manifests");
  m.annotations = read_annotations(object);
  return m;
}

} // namespace

bool Manifest::is_index() const {
  return media_type == media_type::oci_index || media_type == media_type::docker_manifest_list ||
         (!config && !manifests.empty());
}

nlohmann::json to_json(const Descriptor& d) {
  nlohmann::json json = {{"mediaType", d.media_type}, {"digest", d.digest.str()}, {"size", d.size}};
  if (d.artifact_type) {
    json["artifactType"] = *d.artifact_type;
  }
  if (!d.annotations.empty()) {
    json["annotations"] = d.annotations;
  }
  return json;
}

nlohmann::json to_json(const Manifest& m) {
  nlohmann::json json = {{"schemaVersion", m.schema_version}};
  if (!m.media_type.empty()) {
    json["mediaType"] = m.media_type;
  }
  if (m.artifact_type) {
    json["artifactType"] = *m.artifact_type;
  }
  if (m.config) {
    json["config"] = to_json(*m.config);
  }
  if (m.is_index()) {
    json["manifests"] = nlohmann::json::array();
    for (const auto& d : m.manifests) {
      json["manifests"].push_back(to_json(d));
    }
  } else {
    json["layers"] = nlohmann::json::array();
    for (const auto& d : m.layers) {
      json["layers"].push_back(to_json(d));
    }
  }
  if (!m.annotations.empty()) {
    json["annotations"] = m.annotations;
  }
  return json;
}

std::string serialize(const Manifest& manifest) {
  return to_json(manifest).dump();
}

Result<Manifest> parse_manifest(std::string_view bytes) {
  return util::read_json_text(bytes, {ErrorCategory::registry, "invalid manifest"}, read_manifest);
}

Result<std::string> with_manifest_annotations(std::string_view bytes, const Annotations& added) {
  // Edited as JSON, not through Manifest: Manifest writes only the fields it knows, and a
  // round trip through it would drop whatever else the producer put in. Lume decodes
  // annotations as [String:String]: a manifest that breaks that is not one we should re-publish.
  const auto annotate = [&](const JsonValue& value) {
    read_annotations(value.object());
    nlohmann::json manifest = value.json();
    for (const auto& [key, annotation] : added) {
      manifest["annotations"][key] = annotation;
    }
    return manifest.dump();
  };
  return util::read_json_text(
      bytes, {ErrorCategory::registry, "adding annotations to a manifest"}, annotate);
}

Descriptor FetchedManifest::descriptor() const {
  Descriptor d;
  d.media_type = media_type;
  d.digest = digest;
  d.size = bytes.size();
  return d;
}

} // namespace lume_unlock::oci
