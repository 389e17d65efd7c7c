#include "transfer/bundle_location.hpp"

#include "transfer/bundle_fetch.hpp"
#include "util/child_process.hpp"
#include "util/text.hpp"

#include <cstdlib>
#include <filesystem>

namespace lume_unlock::transfer {

namespace {

using util::ends_with;

bool is_archive_name(const std::string& path) {
  return ends_with(path, ".tar.gz") || ends_with(path, ".tgz");
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
  if (auto executable = util::executable_path()) {
    if (auto installed = installed_bundle_beside(*executable)) {
      return {*installed, "installed"};
    }
  }
  return {LUME_UNLOCK_DEFAULT_BUNDLE_DIR, "build tree"};
}

std::optional<std::string> installed_bundle_beside(const std::string& executable) {
  const std::filesystem::path bundle =
      std::filesystem::path(executable).parent_path().parent_path() / "share" / "lume-unlock" /
      "shim-bundle";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(bundle / "bundle.json", ec)) {
    return std::nullopt;
  }
  return bundle.lexically_normal().string();
}

LocationKind location_kind(const std::string& location) {
  std::error_code ec;
  if (location.empty() || std::filesystem::exists(location, ec)) {
    return LocationKind::path;
  }
  if (location.find("@sha256:") != std::string::npos) {
    return LocationKind::reference;
  }
  if (location[0] == '/' || location[0] == '.' || location[0] == '~' || is_archive_name(location)) {
    return LocationKind::path;
  }
  const auto last_slash = location.rfind('/');
  const bool tagged =
      location.find(':', last_slash == std::string::npos ? 0 : last_slash) != std::string::npos;
  if (tagged) {
    return LocationKind::reference;
  }
  if (last_slash == std::string::npos) {
    return LocationKind::path;
  }
  // The same test parse_reference uses to tell a registry from a repository component.
  const std::string first = location.substr(0, location.find('/'));
  const bool registry_host = first == "localhost" || first.find('.') != std::string::npos ||
                             first.find(':') != std::string::npos;
  return registry_host ? LocationKind::reference : LocationKind::path;
}

Result<LocatedBundle> load_located_bundle(const BundleLocation& location,
                                          oci::RegistryClient& registry,
                                          const std::vector<signing::TrustedKey>& trusted_keys) {
  const std::string named = "shim bundle '" + location.path + "' (from " + location.source + ")";
  if (location_kind(location.path) == LocationKind::reference) {
    auto ref = oci::parse_reference(location.path);
    if (!ref) {
      return ref.error().with_context(named);
    }
    // A tag can move between two creates from one recipe; a digest cannot.
    if (!ref.value().digest) {
      return Error(ErrorCategory::usage,
                   named,
                   "it is not a local path, and a registry reference must be pinned by digest",
                   "pin it by digest: lume-unlock resolve " + location.path + " prints it; write " +
                       location.path + "@sha256:<hex>");
    }
    std::optional<signing::VerifiedSignature> signature;
    if (!trusted_keys.empty()) {
      auto verified = signing::verify_image_signature(registry, ref.value(), trusted_keys);
      if (!verified) {
        return verified.error().with_context(named);
      }
      signature = verified.value();
    }
    auto fetched = transfer::fetch_bundle(registry, ref.value());
    if (!fetched) {
      return fetched.error().with_context(location.source);
    }
    return LocatedBundle{std::move(fetched.value().bundle), ref.value(), signature};
  }
  std::error_code ec;
  if (!std::filesystem::exists(location.path, ec)) {
    return Error(ErrorCategory::usage,
                 named,
                 "it does not exist",
                 "build it with 'cmake --build build --target shim-bundle', or pass --bundle "
                 "DIR|ARCHIVE|REF@sha256:… (or set LUME_UNLOCK_BUNDLE)");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto loaded,
                         is_archive_name(location.path)
                             ? bundle::load_bundle_archive(location.path, "", util::ExtractLimits{})
                             : bundle::load_bundle_directory(location.path));
  return LocatedBundle{std::move(loaded), std::nullopt, std::nullopt};
}

} // namespace lume_unlock::transfer
