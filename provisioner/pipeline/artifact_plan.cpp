#include "pipeline/artifact_plan.hpp"

#include "util/size.hpp"
#include "util/text.hpp"

namespace lume_unlock::pipeline {

namespace {

std::string short_hex(const std::string& hex) {
  return "sha256:" + hex.substr(0, 12) + "…";
}

} // namespace

std::string describe_fetch(const recipe::Recipe& recipe,
                           const recipe::LockFile* lock,
                           const fetch::BlobCache* cache) {
  std::string text =
      "fetch " + util::plural(recipe.install.size(), "artifact") + " onto the host, verified:";
  for (const auto& item : recipe.install) {
    const apply::ArtifactPin pin = apply::pin_of(item, lock);
    std::string state;
    if (!pin.sha256) {
      state = "download, unpinned: 'lume-unlock lock' pins it";
    } else if (cache != nullptr && cache->find(*pin.sha256)) {
      state = "in the cache, " + short_hex(*pin.sha256);
    } else {
      state = "download, pinned " + short_hex(*pin.sha256) + (pin.from_lock ? " (lock)" : "");
    }
    text += "\n    " + item.field + " " + fetch::describe(recipe::install_source(recipe, item)) +
            " -> " + item.dest + " (" + fetch::format_name(item.unpack) + "; " + state + ")";
  }
  return text;
}

bool all_cached(const recipe::Recipe& recipe,
                const recipe::LockFile* lock,
                const fetch::BlobCache* cache) {
  for (const auto& item : recipe.install) {
    const apply::ArtifactPin pin = apply::pin_of(item, lock);
    if (cache == nullptr || !pin.sha256 || !cache->find(*pin.sha256)) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> unpinned_warnings(const recipe::Recipe& recipe,
                                           const recipe::LockFile* lock) {
  std::vector<std::string> warnings;
  for (const auto& item : recipe.install) {
    if (!apply::pin_of(item, lock).sha256) {
      warnings.push_back(item.field + " (" + fetch::describe(recipe::install_source(recipe, item)) +
                         ") has no sha256 in the recipe or its lock: whatever it serves is "
                         "installed; pin it with 'lume-unlock lock " +
                         recipe.path + "'");
    }
  }
  return warnings;
}

std::string summarize_fetch(const std::vector<apply::StagedArtifact>& staged) {
  std::uint64_t total = 0;
  std::uint64_t downloaded = 0;
  std::size_t cached = 0;
  for (const auto& artifact : staged) {
    total += artifact.fetched.size;
    downloaded += artifact.fetched.network_bytes;
    cached += artifact.fetched.from_cache ? 1 : 0;
  }
  const std::size_t n = staged.size();
  return util::plural(n, "artifact") + ", " + util::format_size(total) + ": " +
         std::to_string(cached) + " from the cache, " + util::format_size(downloaded) +
         " downloaded";
}

std::string summarize_install(const apply::ArtifactInstallReport& report) {
  if (!report.changed()) {
    return std::to_string(report.files_total) + " files in place";
  }
  return "sent " + std::to_string(report.files_sent) + " of " + std::to_string(report.files_total) +
         " files (" + util::format_size(report.bytes_sent) + "), checked by SHA-256 in the guest";
}

std::string summarize_links(const apply::SharedLinkReport& report) {
  const std::size_t n = report.records.size();
  const std::string items = util::plural(n, "shared item");
  return report.changed() ? items + " linked to the read-only shared cache (0 bytes sent)"
                          : items + " linked to the read-only shared cache, in place";
}

} // namespace lume_unlock::pipeline
