#pragma once

#include "bundle/manifest.hpp"
#include "util/archive.hpp"
#include "util/result.hpp"

#include <memory>
#include <string>

namespace lume_unlock::bundle {

/// A shim bundle on disk whose files all matched bundle.json when it was loaded. A bundle loaded
/// from an archive keeps its extracted copy alive for as long as any copy of this object exists.
class LoadedBundle {
public:
  const std::string& root() const { return m_root; }
  const BundleManifest& manifest() const { return m_manifest; }
  /// Where `file` is on this machine.
  std::string local_path(const BundleFile& file) const { return m_root + "/" + file.path; }

private:
  friend Result<LoadedBundle> load_verified(const std::string& directory, const std::string& what);
  friend Result<LoadedBundle> load_bundle_archive(const std::string& archive,
                                                  const std::string& work_directory,
                                                  const util::ExtractLimits& limits);
  std::string m_root;
  BundleManifest m_manifest;
  std::shared_ptr<void> m_extracted; ///< removes the extracted copy when the last owner goes
};

/// load_bundle_directory() with `what` naming the bundle in errors (a directory or an archive).
Result<LoadedBundle> load_verified(const std::string& directory, const std::string& what);

/// Reads `<directory>/bundle.json`, validates it and verifies every file.
Result<LoadedBundle> load_bundle_directory(const std::string& directory);

/// Extracts `archive` (lume-unlock-shim-bundle-<version>.tar.gz, bundle.json at its root) through
/// util::safe_extract into a new temporary directory under `work_directory` (the system's
/// temporary directory when empty), then loads it as load_bundle_directory() does.
Result<LoadedBundle> load_bundle_archive(const std::string& archive,
                                         const std::string& work_directory = {},
                                         const util::ExtractLimits& limits = {});

} // namespace lume_unlock::bundle
