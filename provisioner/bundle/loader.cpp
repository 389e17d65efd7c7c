#include "bundle/bundle.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace lume_unlock::bundle {

namespace {

namespace fs = std::filesystem;

constexpr const char* k_rebuild_hint =
    "rebuild the bundle with 'cmake --build build --target shim-bundle', or fetch it again";

/// Every file bundle.json names is a regular file under `root` with that SHA-256 (verification).
Status verify_bundle_files(const std::string& root, const BundleManifest& manifest) {
  for (const auto& file : manifest.files()) {
    const std::string path = root + "/" + file.path;
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) {
      return Error(ErrorCategory::verification,
                   "bundle file '" + file.path + "' is missing",
                   std::strerror(errno),
                   k_rebuild_hint);
    }
    if (!S_ISREG(st.st_mode)) {
      return Error(ErrorCategory::verification,
                   "bundle file '" + file.path + "' is not a regular file",
                   "",
                   k_rebuild_hint);
    }
    LUME_UNLOCK_TRY_ASSIGN(auto digest, util::sha256_file_hex(path));
    if (digest != file.sha256) {
      return Error(ErrorCategory::verification,
                   "bundle file '" + file.path + "' does not match bundle.json",
                   "expected sha256 " + file.sha256 + ", found " + digest,
                   k_rebuild_hint);
    }
  }
  return ok_status();
}

} // namespace

Result<LoadedBundle> load_bundle_directory(const std::string& directory) {
  return load_verified(directory, "cannot load shim bundle '" + directory + "'");
}

Result<LoadedBundle> load_verified(const std::string& directory, const std::string& what) {
  auto text = util::read_file(directory + "/" + k_manifest_name);
  if (!text) {
    return Error(ErrorCategory::usage,
                 what,
                 text.error().message(),
                 "pass the directory that holds bundle.json (<build>/shim-bundle)");
  }
  auto manifest = parse_bundle_manifest(text.value());
  if (!manifest) {
    return manifest.error().with_context(what);
  }
  if (auto verified = verify_bundle_files(directory, manifest.value()); !verified) {
    return verified.error().with_context(what);
  }
  LoadedBundle bundle;
  bundle.m_root = directory;
  bundle.m_manifest = std::move(manifest).value();
  return bundle;
}

Result<LoadedBundle> load_bundle_archive(const std::string& archive,
                                         const std::string& work_directory,
                                         const util::ExtractLimits& limits) {
  std::error_code ec;
  std::string base = work_directory.empty() ? fs::temp_directory_path(ec).string() : work_directory;
  std::string pattern = base + "/lume-unlock-bundle.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return Error(ErrorCategory::failure,
                 "cannot load shim bundle '" + archive + "'",
                 "cannot create a directory under '" + base + "': " + std::strerror(errno));
  }
  // Owned from here on: removed on every failure below, or when the last LoadedBundle goes.
  std::shared_ptr<void> owner(new std::string(pattern), [](void* p) {
    auto* path = static_cast<std::string*>(p);
    std::error_code ignored;
    fs::remove_all(*path, ignored);
    delete path;
  });
  const std::string root = pattern + "/bundle";
  LUME_UNLOCK_TRY(util::safe_extract(archive, root, limits));
  auto bundle = load_verified(root, "cannot load shim bundle '" + archive + "'");
  if (!bundle) {
    return bundle.error();
  }
  bundle.value().m_extracted = owner;
  return bundle;
}

} // namespace lume_unlock::bundle
