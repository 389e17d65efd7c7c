#pragma once

#include "util/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::recipe {

/// An image reference named by a recipe, with the field it came from.
struct RecipeReference {
  std::string field;     ///< "source.image"
  std::string reference; ///< as written
};

/// MINIMAL recipe reader for `lume-unlock lock`: reads only `source.image` from recipe YAML.
/// The full recipe format comes with its own issue and replaces this file.
/// Fails (category usage) as "<path>:<line>:<col>: <what is wrong>".
Result<std::vector<RecipeReference>> read_recipe_references(std::string_view yaml_text,
                                                            const std::string& path);

} // namespace lume_unlock::recipe
