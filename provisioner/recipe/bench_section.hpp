#pragma once

#include "recipe_parser.hpp"

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

namespace lume_unlock::recipe {

struct Recipe;

/// Where the bench errors found after the walk point (optional: assigning to a YAML::Node
/// rebinds only an empty one, so each is emplaced once).
struct BenchNodes {
  std::optional<YAML::Node> bench;
  std::optional<YAML::Node> entry;
  std::optional<YAML::Node> perplexity_entry;
  std::optional<YAML::Node> published;
};

/// Reads a recipe's `bench:` block (the model, the llama-bench sizes and the gate's
/// thresholds) into recipe.bench, noting in `nodes` where it was written. Fails through `p`.
void parse_bench_section(
    const Parser& p, const YAML::Node& n, const std::string& f, Recipe& recipe, BenchNodes& nodes);

/// Checked once the whole recipe is read, since `bench` may come before `enablement`: the
/// bench's entry and its perplexity_entry must be entries of the recipe's enablement list.
void check_bench_entry(const Parser& p, const Recipe& recipe, const BenchNodes& nodes);

} // namespace lume_unlock::recipe
