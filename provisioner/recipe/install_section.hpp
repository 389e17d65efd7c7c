#pragma once

#include "recipe_parser.hpp"

#include <yaml-cpp/yaml.h>

#include <string>

namespace lume_unlock::recipe {

struct Recipe;

/// Reads a recipe's `install:` list (issue 24) into recipe.install: each item's source, pins,
/// dest and unpacking, and no two items writing into each other's paths. Fails through `p`.
void parse_install_section(const Parser& p,
                           const YAML::Node& n,
                           const std::string& f,
                           Recipe& recipe);

} // namespace lume_unlock::recipe
