#pragma once

// The readers of a recipe's sections, internal to recipe/: each fills its part of `recipe` or
// fails through `p`. recipe_sections.cpp has every section but `install:` (source, vm, guest,
// shim, trust, registry, bench), install_section.cpp `install:`.

#include "util/yaml_reader.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::recipe {

struct Recipe;
using util::YamlReader;

/// True when every character of `text` is one of `allowed` (a plain scan: no input length can
/// make it recurse, as std::regex did in issue 15).
inline bool all_of_in(std::string_view text, std::string_view allowed) {
  return text.find_first_not_of(allowed) == std::string_view::npos;
}
inline constexpr std::string_view k_digits = "0123456789";

void parse_source_section(const YamlReader&, const YAML::Node&, const std::string&, Recipe&);
void parse_vm_section(const YamlReader&, const YAML::Node&, const std::string&, Recipe&);
void parse_guest_section(const YamlReader&, const YAML::Node&, const std::string&, Recipe&);
void parse_shim_section(const YamlReader&, const YAML::Node&, const std::string&, Recipe&);
void parse_trust_section(const YamlReader&, const YAML::Node&, const std::string&, Recipe&);
void parse_registry_section(const YamlReader&, const YAML::Node&, const std::string&, Recipe&);
/// `install:` (issue 24): each item's source, pins, dest and unpacking, and no two items
/// writing into each other's paths.
void parse_install_section(const YamlReader&, const YAML::Node&, const std::string&, Recipe&);

/// Where the bench errors found after the walk point (optional: assigning to a YAML::Node
/// rebinds only an empty one, so each is emplaced once).
struct BenchNodes {
  std::optional<YAML::Node> bench, entry, perplexity_entry, published;
};

/// `bench:`: the model, the llama-bench sizes, the gate's thresholds and the published run,
/// noting in `nodes` where they were written.
void parse_bench_section(const YamlReader& p,
                         const YAML::Node& n,
                         const std::string& f,
                         Recipe& recipe,
                         BenchNodes& nodes);

/// Checked once the whole recipe is read, since `bench` may come before `enablement`: the
/// bench's entry and its perplexity_entry must be entries of the recipe's enablement list.
void check_bench_entry(const YamlReader& p, const Recipe& recipe, const BenchNodes& nodes);

} // namespace lume_unlock::recipe
