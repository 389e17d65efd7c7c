#pragma once

// The short sections of a recipe, one reader each: what the VM is made from (`source:`), its
// hardware (`vm:`), the guest account (`guest:`), the shim (`shim:`), whose signatures to trust
// (`trust:`) and the registry's CA (`registry:`). Each fills its part of `recipe` or fails
// through `p`; `install:` and `bench:` have files of their own.

#include "recipe_parser.hpp"

#include <yaml-cpp/yaml.h>

#include <string>

namespace lume_unlock::recipe {

struct Recipe;

void parse_source_section(const Parser& p,
                          const YAML::Node& n,
                          const std::string& f,
                          Recipe& recipe);
void parse_vm_section(const Parser& p, const YAML::Node& n, const std::string& f, Recipe& recipe);
void parse_guest_section(const Parser& p,
                         const YAML::Node& n,
                         const std::string& f,
                         Recipe& recipe);
void parse_shim_section(const Parser& p, const YAML::Node& n, const std::string& f, Recipe& recipe);
void parse_trust_section(const Parser& p,
                         const YAML::Node& n,
                         const std::string& f,
                         Recipe& recipe);
void parse_registry_section(const Parser& p,
                            const YAML::Node& n,
                            const std::string& f,
                            Recipe& recipe);

} // namespace lume_unlock::recipe
