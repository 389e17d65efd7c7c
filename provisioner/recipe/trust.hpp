#pragma once

#include "recipe/recipe.hpp"
#include "signing/signing.hpp"
#include "util/result.hpp"

#include <vector>

namespace lume_unlock::recipe {

/// The public keys of a recipe's `trust:` block, read and parsed: inline PEM as written, paths
/// relative to the directory of the recipe file. Empty when the recipe has no trust block. Fails
/// (usage, exit 2) naming the entry when a file is missing or an entry is not a P-256 public key.
Result<std::vector<signing::TrustedKey>> load_trusted_keys(const Recipe& recipe);

} // namespace lume_unlock::recipe
