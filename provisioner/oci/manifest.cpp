#include "oci/manifest.hpp"

#include "oci/media_types.hpp"
#include "util/json_parse.hpp"

namespace lume_unlock::oci {

namespace {

Error invalid(const std::string& why) {
  return Error(ErrorCategory::registry, "invalid manifest", why);
}

Result<std::string>
string_field(const nlohmann::json& json, const char* key, const std::string& where) {
  auto it = json.find(key);
  if (it == json.end()) {
    return invalid(where + "'" + key + "' is missing");
  }
  if (!it->is_string()) {
    return invalid(where + "'" + key + "' must be a string");
  }
  return it->get<std::string>();
}

Result<Annotations> annotations_field(const nlohmann::json& json, const std::string& where) {
  Annotations out;
  auto it = json.find("annotations");
  if (it == json.end() || it->is_null()) {
    return out;
  }
  if (!it->is_object()) {
    return invalid(where + "'annotations' must be an object");
  }
  for (const auto& [key, value] : it->items()) {
    if (!value.is_string()) {
      return invalid(where + "annotation '" + key + "' must be a string");
    }
    out[key] = value.get<std::string>();
  }
  return out;
}

Result<Descriptor> descriptor_at(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) {
    return invalid(where + "must be an object");
  }
  Descriptor d;
  LUME_UNLOCK_TRY_ASSIGN(auto media_type, string_field(json, "mediaType", where));
  d.media_type = media_type;
  LUME_UNLOCK_TRY_ASSIGN(auto digest_text, string_field(json, "digest", where));
  auto digest = Digest::parse(digest_text);
  if (!digest) {
    return invalid(where + "'digest': " + digest.error().why());
  }
  d.digest = digest.value();
  auto size = json.find("size");
  if (size == json.end() || !size->is_number_unsigned()) {
    return invalid(where + "'size' must be a non-negative integer");
  }
  d.size = size->get<std::uint64_t>();
  if (auto at = json.find("artifactType"); at != json.end()) {
    if (!at->is_string()) {
      return invalid(where + "'artifactType' must be a string");
    }
    d.artifact_type = at->get<std::string>();
  }
  LUME_UNLOCK_TRY_ASSIGN(auto annotations, annotations_field(json, where));
  d.annotations = annotations;
  return d;
}

Result<std::vector<Descriptor>> descriptor_list(const nlohmann::json& json, const char* key) {
  std::vector<Descriptor> out;
  auto it = json.find(key);
  if (it == json.end() || it->is_null()) {
    return out;
  }
  if (!it->is_array()) {
    return invalid(std::string("'") + key + "' must be an array");
  }
  for (std::size_t i = 0; i < it->size(); ++i) {
    LUME_UNLOCK_TRY_ASSIGN(
        auto d, descriptor_at((*it)[i], std::string(key) + "[" + std::to_string(i) + "]: "));
    out.push_back(std::move(d));
  }
  return out;
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

Result<Descriptor> descriptor_from_json(const nlohmann::json& json) {
  return descriptor_at(json, "");
}

Result<Manifest> parse_manifest(std::string_view bytes) {
  nlohmann::json json = util::parse_json(bytes).value;
  if (json.is_discarded()) {
    return invalid("the body is not valid JSON");
  }
  if (!json.is_object()) {
    return invalid("the body is not a JSON object");
  }
  Manifest m;
  auto version = json.find("schemaVersion");
  if (version == json.end() || !version->is_number_integer() || version->get<int>() != 2) {
    return invalid("'schemaVersion' must be 2");
  }
  m.schema_version = 2;
  if (auto mt = json.find("mediaType"); mt != json.end()) {
    if (!mt->is_string()) {
      return invalid("'mediaType' must be a string");
    }
    m.media_type = mt->get<std::string>();
  }
  if (auto at = json.find("artifactType"); at != json.end()) {
    if (!at->is_string()) {
      return invalid("'artifactType' must be a string");
    }
    m.artifact_type = at->get<std::string>();
  }
  if (auto config = json.find("config"); config != json.end() && !config->is_null()) {
    LUME_UNLOCK_TRY_ASSIGN(auto d, descriptor_at(*config, "config: "));
    m.config = std::move(d);
  }
  LUME_UNLOCK_TRY_ASSIGN(auto layers, descriptor_list(json, "layers"));
  m.layers = std::move(layers);
  LUME_UNLOCK_TRY_ASSIGN(auto manifests, descriptor_list(json, "manifests"));
  m.manifests = std::move(manifests);
  LUME_UNLOCK_TRY_ASSIGN(auto annotations, annotations_field(json, ""));
  m.annotations = annotations;
  return m;
}

Descriptor FetchedManifest::descriptor() const {
  Descriptor d;
  d.media_type = media_type;
  d.digest = digest;
  d.size = bytes.size();
  return d;
}

} // namespace lume_unlock::oci
