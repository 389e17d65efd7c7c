#include "cli/version_text.hpp"

#include "bundle/loader.hpp"
#include "cli/bundle_location.hpp"
#include "cli/version.hpp"
#include "util/sha256.hpp"

#include <optional>

namespace lume_unlock::cli {

namespace {

/// "sha256:<hex>" of the bundle.json of the bundle at `path`, after verifying its files.
Result<std::string> bundle_digest(const std::string& path) {
  const bool archive = path.size() > 7 && path.compare(path.size() - 7, 7, ".tar.gz") == 0;
  LUME_UNLOCK_TRY_ASSIGN(auto loaded,
                         archive ? bundle::load_bundle_archive(path)
                                 : bundle::load_bundle_directory(path));
  LUME_UNLOCK_TRY_ASSIGN(auto hex, util::sha256_file_hex(loaded.root() + "/bundle.json"));
  return "sha256:" + hex;
}

} // namespace

std::string version_text() {
  std::string text =
      std::string("lume-unlock ") + k_version + " (source " + k_source_revision + ")";
  const BundleLocation location = locate_bundle(std::nullopt, std::nullopt);
  text += "\nshim bundle " + location.path + " (" + location.source + "): ";
  if (location_kind(location.path) == LocationKind::reference) {
    return text + "a registry reference, not fetched here";
  }
  auto digest = bundle_digest(location.path);
  return text +
         (digest ? "bundle.json " + digest.value() : "unreadable: " + digest.error().message());
}

} // namespace lume_unlock::cli
