#include "transfer/shim_bundle.hpp"

#include "oci/manifest.hpp"
#include "util/atomic_file.hpp"
#include "util/child_process.hpp"
#include "util/text.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace lume_unlock::transfer {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_publish_hint =
    "publish the bundle with 'lume-unlock bundle push ARCHIVE REF' and pin the reference it "
    "prints";

bool is_archive_name(const std::string& path) {
  return util::ends_with(path, ".tar.gz") || util::ends_with(path, ".tgz");
}

/// Checks that `manifest` has the shape publish_bundle() gives a shim bundle artifact.
Status check_artifact_shape(const oci::Manifest& manifest,
                            const util::ExtractLimits& limits,
                            const std::string& what) {
  auto wrong = [&](const std::string& why) {
    return Error(ErrorCategory::registry, what, why, k_publish_hint);
  };
  if (manifest.is_index()) {
    return wrong("it is an index, not a shim bundle artifact");
  }
  const std::string artifact_type = manifest.artifact_type.value_or("");
  if (artifact_type != oci::media_type::shim_bundle) {
    return wrong("its artifactType is '" + artifact_type + "', expected '" +
                 oci::media_type::shim_bundle + "'");
  }
  if (!manifest.config || manifest.config->media_type != oci::media_type::shim_bundle_config) {
    return wrong("its config has media type '" +
                 (manifest.config ? manifest.config->media_type : std::string()) + "', expected '" +
                 oci::media_type::shim_bundle_config + "'");
  }
  if (manifest.layers.size() != 1) {
    return wrong("it has " + std::to_string(manifest.layers.size()) +
                 " layers, expected exactly one (the bundle archive)");
  }
  const oci::Descriptor& layer = manifest.layers.front();
  if (layer.media_type != oci::media_type::shim_bundle_layer) {
    return wrong("its layer has media type '" + layer.media_type + "', expected '" +
                 oci::media_type::shim_bundle_layer + "'");
  }
  // Refused before downloading: the archive cannot extract to more than this anyway.
  if (layer.size > limits.max_total_bytes) {
    return wrong("its layer is " + std::to_string(layer.size) + " bytes, more than the " +
                 std::to_string(limits.max_total_bytes) + "-byte limit for a bundle");
  }
  return ok_status();
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
  const fs::path bundle =
      fs::path(executable).parent_path().parent_path() / "share" / "lume-unlock" / "shim-bundle";
  std::error_code ec;
  if (!fs::is_regular_file(bundle / "bundle.json", ec)) {
    return std::nullopt;
  }
  return bundle.lexically_normal().string();
}

LocationKind location_kind(const std::string& location) {
  std::error_code ec;
  if (location.empty() || fs::exists(location, ec)) {
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
    auto fetched = fetch_bundle(registry, ref.value());
    if (!fetched) {
      return fetched.error().with_context(location.source);
    }
    return LocatedBundle{std::move(fetched.value().bundle), ref.value(), signature};
  }
  std::error_code ec;
  if (!fs::exists(location.path, ec)) {
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

Result<PublishedBundle> publish_bundle(oci::RegistryClient& registry,
                                       const std::string& archive,
                                       const oci::Reference& ref) {
  const std::string what = "bundle push of '" + archive + "' to '" + ref.str() + "'";
  if (ref.digest || !ref.tag) {
    return Error(ErrorCategory::usage,
                 what,
                 "the reference must name a tag and no digest",
                 "e.g. lume-unlock bundle push " + archive + " " + ref.repository_path() + ":1.0");
  }
  auto loaded = bundle::load_bundle_archive(archive);
  if (!loaded.ok()) {
    return loaded.error().with_context(what);
  }
  // The config is bundle.json's bytes as shipped, not a re-encoding.
  auto config_bytes = util::read_file(loaded.value().root() + "/bundle.json");
  if (!config_bytes.ok()) {
    return config_bytes.error().with_context(what);
  }
  LUME_UNLOCK_TRY_ASSIGN(
      auto config,
      registry.push_blob_bytes(ref, config_bytes.value(), oci::media_type::shim_bundle_config));
  LUME_UNLOCK_TRY_ASSIGN(auto layer,
                         registry.push_blob_file(ref, archive, oci::media_type::shim_bundle_layer));
  layer.annotations[oci::annotation::title] = fs::path(archive).filename().string();

  PublishedBundle published{ref, oci::Digest::of_bytes(""), loaded.value().manifest().version, {}};
  oci::Manifest& m = published.manifest;
  m.media_type = oci::media_type::oci_manifest;
  m.artifact_type = oci::media_type::shim_bundle;
  m.config = config;
  m.layers.push_back(layer);
  m.annotations["org.opencontainers.image.version"] = published.version;
  LUME_UNLOCK_TRY_ASSIGN(
      auto digest, registry.push_manifest(ref, oci::serialize(m), oci::media_type::oci_manifest));
  published.digest = digest;
  return published;
}

Result<FetchedBundle> fetch_bundle(oci::RegistryClient& registry,
                                   const oci::Reference& ref,
                                   const std::string& work_directory,
                                   const util::ExtractLimits& limits) {
  const std::string what = "shim bundle '" + ref.str() + "'";
  if (!ref.digest) {
    return Error(ErrorCategory::usage,
                 what,
                 "a registry reference must be pinned by digest",
                 "pin it by digest: lume-unlock resolve " + ref.str() + " prints it");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto fetched, registry.get_manifest(ref));
  const oci::Manifest& manifest = fetched.manifest;
  LUME_UNLOCK_TRY(check_artifact_shape(manifest, limits, what));
  const oci::Descriptor& layer = manifest.layers.front();

  std::error_code ec;
  const std::string parent =
      work_directory.empty() ? fs::temp_directory_path(ec).string() : work_directory;
  std::string scratch = parent + "/lume-unlock-bundle-fetch.XXXXXX";
  if (mkdtemp(scratch.data()) == nullptr) {
    return Error(ErrorCategory::failure,
                 "cannot fetch " + what,
                 "cannot create a directory under '" + parent + "': " + std::strerror(errno));
  }
  // The download (and whatever it keeps beside a partial file) goes with the directory.
  struct RemoveAll {
    std::string path;
    ~RemoveAll() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  };
  const RemoveAll remove_scratch{scratch};
  const std::string archive = scratch + "/bundle.tar.gz";
  LUME_UNLOCK_TRY(registry.download_blob(ref, layer, archive));
  auto loaded = bundle::load_bundle_archive(archive, work_directory, limits);
  if (!loaded) {
    return loaded.error().with_context(what);
  }

  // The config travels beside the layer as a description of it; a config that is not the
  // archive's own bundle.json means the artifact was assembled from two different bundles.
  // Comparing digests compares bytes: the registry can only serve the config under its digest.
  auto inside = util::read_file(loaded.value().root() + "/bundle.json");
  if (!inside) {
    return inside.error().with_context(what);
  }
  const oci::Digest inside_digest = oci::Digest::of_bytes(inside.value());
  if (manifest.config->digest != inside_digest || manifest.config->size != inside.value().size()) {
    return Error(ErrorCategory::registry,
                 what,
                 "its config '" + manifest.config->digest.str() +
                     "' is not the bundle.json inside its layer ('" + inside_digest.str() + "')",
                 "the artifact is inconsistent; do not use it. " + std::string(k_publish_hint));
  }
  return FetchedBundle{std::move(loaded).value(), ref, layer};
}

} // namespace lume_unlock::transfer
