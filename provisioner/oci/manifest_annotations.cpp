#include "oci/manifest_annotations.hpp"

#include "util/json_reader.hpp"

#include <nlohmann/json.hpp>

namespace lume_unlock::oci {

Result<std::string> with_manifest_annotations(std::string_view bytes, const Annotations& added) {
  const std::string what = "adding annotations to a manifest";
  // Edited as JSON, not through Manifest: Manifest writes only the fields it knows, and a
  // round trip through it would drop whatever else the producer put in.
  nlohmann::json manifest = util::parse_json(bytes).value;
  if (!manifest.is_object()) {
    return Error(ErrorCategory::registry, what, "the manifest is not a JSON object");
  }
  nlohmann::json& annotations = manifest["annotations"];
  if (annotations.is_null()) {
    annotations = nlohmann::json::object();
  }
  if (!annotations.is_object()) {
    return Error(ErrorCategory::registry, what, "its 'annotations' is not an object");
  }
  for (const auto& [key, value] : annotations.items()) {
    if (!value.is_string()) {
      // Lume decodes annotations as [String:String]; a manifest that breaks that is not one
      // we should re-publish.
      return Error(ErrorCategory::registry, what, "annotation '" + key + "' is not a string");
    }
  }
  for (const auto& [key, value] : added) {
    annotations[key] = value;
  }
  return manifest.dump();
}

} // namespace lume_unlock::oci
