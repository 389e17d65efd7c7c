#include "transfer/bundle_fetch.hpp"

#include "oci/media_types.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace lume_unlock::transfer {

namespace {

namespace fs = std::filesystem;

constexpr const char* k_publish_hint =
    "publish the bundle with 'lume-unlock bundle push ARCHIVE REF' and pin the reference it "
    "prints";

/// A directory made with mkdtemp and removed, with everything in it, when this goes.
class ScratchDirectory {
public:
  static Result<ScratchDirectory> create(const std::string& base, const std::string& what) {
    std::error_code ec;
    std::string parent = base.empty() ? fs::temp_directory_path(ec).string() : base;
    std::string pattern = parent + "/lume-unlock-bundle-fetch.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return Error(ErrorCategory::failure,
                   what,
                   "cannot create a directory under '" + parent + "': " + std::strerror(errno));
    }
    return ScratchDirectory(std::move(pattern));
  }
  ScratchDirectory(ScratchDirectory&& other) noexcept : m_path(std::move(other.m_path)) {
    other.m_path.clear();
  }
  ScratchDirectory& operator=(ScratchDirectory&&) = delete;
  ~ScratchDirectory() {
    if (!m_path.empty()) {
      std::error_code ignored;
      fs::remove_all(m_path, ignored);
    }
  }
  const std::string& path() const { return m_path; }

private:
  explicit ScratchDirectory(std::string path) : m_path(std::move(path)) {}
  std::string m_path;
};

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

  LUME_UNLOCK_TRY_ASSIGN(auto scratch,
                         ScratchDirectory::create(work_directory, "cannot fetch " + what));
  const std::string archive = scratch.path() + "/bundle.tar.gz";
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
