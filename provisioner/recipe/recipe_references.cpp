#include "recipe/recipe_references.hpp"

#include <yaml-cpp/yaml.h>

namespace lume_unlock::recipe {

namespace {

Error at(const std::string& path, const YAML::Mark& mark, const std::string& why) {
  std::string where = path;
  if (mark.line >= 0) {
    where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  return Error(ErrorCategory::usage,
               where,
               why,
               "a recipe names its base image as 'source: {image: REFERENCE}'");
}

} // namespace

Result<std::vector<RecipeReference>> read_recipe_references(std::string_view yaml_text,
                                                            const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::ParserException& e) {
    return at(path, e.mark, "invalid YAML: " + e.msg);
  }
  if (!root.IsMap()) {
    return at(path, root.Mark(), "a recipe must be a mapping");
  }
  const YAML::Node source = root["source"];
  if (!source) {
    return at(path, YAML::Mark::null_mark(), "missing 'source.image'");
  }
  if (!source.IsMap()) {
    return at(path, source.Mark(), "'source' must be a mapping");
  }
  const YAML::Node image = source["image"];
  if (!image) {
    return at(path, source.Mark(), "missing 'source.image'");
  }
  if (!image.IsScalar() || image.Scalar().empty()) {
    return at(path, image.Mark(), "'source.image' must be a non-empty string");
  }
  return std::vector<RecipeReference>{{"source.image", image.Scalar()}};
}

} // namespace lume_unlock::recipe
