#pragma once

#include "apply/artifact_installer.hpp"
#include "apply/artifact_stage.hpp"
#include "fetch/blob_cache.hpp"
#include "recipe/lock_file.hpp"
#include "recipe/recipe.hpp"

#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// The plan's words for the fetch step, one line per install item: its source, where it goes,
/// and whether the cache already holds its pinned digest ("in the cache"), it will be
/// downloaded and checked against it ("download, pinned sha256:ab12…") or it is unpinned
/// ("download, unpinned: 'lume-unlock lock' pins it").
std::string describe_fetch(const recipe::Recipe& recipe,
                           const recipe::LockFile* lock,
                           const fetch::BlobCache* cache);

/// True when the cache holds every item's pinned digest (nothing to download).
bool all_cached(const recipe::Recipe& recipe,
                const recipe::LockFile* lock,
                const fetch::BlobCache* cache);

/// Warnings for items with no digest in the recipe or its lock.
std::vector<std::string> unpinned_warnings(const recipe::Recipe& recipe,
                                           const recipe::LockFile* lock);

/// "2 artifacts, 1.2 GiB: 1 from the cache, 1 downloaded (1.1 GiB)".
std::string summarize_fetch(const std::vector<apply::StagedArtifact>& staged);

/// "sent 3 of 45 files (12.0 MiB)" or "45 files in place".
std::string summarize_install(const apply::ArtifactInstallReport& report);

/// "1 shared item linked to the read-only shared cache (0 bytes sent)", or "…, in place".
std::string summarize_links(const apply::SharedLinkReport& report);

} // namespace lume_unlock::pipeline
