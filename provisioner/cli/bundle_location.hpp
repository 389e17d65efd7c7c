#pragma once

#include "bundle/loader.hpp"

#include <optional>
#include <string>

namespace lume_unlock::cli {

/// Which shim bundle a command uses, and why that one.
struct BundleLocation {
  std::string path;   ///< a bundle directory or a lume-unlock-shim-bundle-*.tar.gz
  std::string source; ///< "--bundle", "recipe shim.bundle", "$LUME_UNLOCK_BUNDLE", "build tree"
};

/// The first of: the command's --bundle flag, the recipe's shim.bundle, $LUME_UNLOCK_BUNDLE, the
/// shim-bundle directory of the build tree this binary came from.
BundleLocation locate_bundle(const std::optional<std::string>& flag,
                             const std::optional<std::string>& recipe_bundle);

/// Loads and verifies the bundle at `location` (a directory, or an archive extracted safely into
/// a temporary directory that lives as long as the returned bundle).
Result<bundle::LoadedBundle> load_located_bundle(const BundleLocation& location);

} // namespace lume_unlock::cli
