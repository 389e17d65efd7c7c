#include "bundle_location.hpp"

#include <cstdlib>
#include <filesystem>

namespace lume_unlock::cli {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

BundleLocation locate_bundle(const std::optional<std::string>& flag,
                             const std::optional<std::string>& recipe_bundle) {
  if (flag && !flag->empty()) {
    return {*flag, "--bundle"};
  }
  if (recipe_bundle && !recipe_bundle->empty()) {
    return {*recipe_bundle, "recipe shim.bundle"};
  }
  if (const char* env = std::getenv("LUME_UNLOCK_BUNDLE"); env != nullptr && *env != '\0') {
    return {env, "$LUME_UNLOCK_BUNDLE"};
  }
  return {LUME_UNLOCK_DEFAULT_BUNDLE_DIR, "build tree"};
}

Result<bundle::LoadedBundle> load_located_bundle(const BundleLocation& location) {
  std::error_code ec;
  if (!std::filesystem::exists(location.path, ec)) {
    return Error(ErrorCategory::usage,
                 "shim bundle '" + location.path + "' (from " + location.source + ")",
                 "it does not exist",
                 "build it with 'cmake --build build --target shim-bundle', or pass --bundle "
                 "DIR|ARCHIVE (or set LUME_UNLOCK_BUNDLE)");
  }
  if (ends_with(location.path, ".tar.gz") || ends_with(location.path, ".tgz")) {
    return bundle::load_bundle_archive(location.path, "", util::ExtractLimits{});
  }
  return bundle::load_bundle_directory(location.path);
}

} // namespace lume_unlock::cli
