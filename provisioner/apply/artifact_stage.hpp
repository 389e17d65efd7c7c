#pragma once

#include "enablement/enablement_list.hpp"
#include "fetch/fetch.hpp"
#include "recipe/recipe.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::apply {

/// The digest an install item must have: the recipe's own, else the lock's, else none (an
/// unpinned item takes whatever its source serves, and `lume-unlock lock` pins it).
struct ArtifactPin {
  std::optional<std::string> sha256;
  bool from_lock = false;
};

/// `lock` is used only when it was made from the recipe's bytes (the caller checks).
ArtifactPin pin_of(const recipe::InstallItem& item, const recipe::LockFile* lock);

/// One install item on the host, ready for the guest: its bytes verified in the cache and
/// unpacked into a staging directory.
struct StagedArtifact {
  recipe::InstallItem item;
  std::string source; ///< fetch::describe() of the resolved source
  fetch::FetchedArtifact fetched;
  bool pinned = false; ///< the digest was known before the fetch (recipe or lock)
  /// Every file and link of the tree, sorted by relative path (unpack none: one, relative "").
  std::vector<fetch::UnpackedFile> files;
};

/// A directory for unpacked trees, removed (with everything in it) when this goes away.
class StagingArea {
public:
  /// Creates <cache root>/staging/<random>.
  static Result<StagingArea> create(const fetch::BlobCache& cache);
  StagingArea(StagingArea&& other) noexcept;
  StagingArea& operator=(StagingArea&&) = delete;
  StagingArea(const StagingArea&) = delete;
  ~StagingArea();
  const std::string& path() const { return m_path; }

private:
  explicit StagingArea(std::string path) : m_path(std::move(path)) {}
  std::string m_path;
};

/// Fetches every install item of `recipe` (fetch::fetch_artifact: from the cache when it holds
/// the pinned digest, else downloaded and verified) and unpacks it into
/// <staging>/<index>, in recipe order. Fails with the fetch's or the unpack's error, the item's
/// field in front ("install[0]: …"); a digest mismatch is exit 4 with nothing cached.
Result<std::vector<StagedArtifact>> stage_artifacts(const recipe::Recipe& recipe,
                                                    const recipe::LockFile* lock,
                                                    fetch::BlobCache& cache,
                                                    const fetch::FetchServices& services,
                                                    const StagingArea& staging);

/// What `lume-unlock lock` records for the recipe's install: items: each fetched into the cache
/// (against the recipe's sha256 when it has one) and pinned to the digest and size it has.
Result<std::vector<recipe::LockedArtifact>> lock_artifacts(const recipe::Recipe& recipe,
                                                           fetch::BlobCache& cache,
                                                           const fetch::FetchServices& services);

/// `lock`'s load check: every file an archive item's `files:` pins that is a Mach-O must load on
/// macOS `guest_macos` (its arm64 slice's minimum, macho::judge_program). The archive comes from
/// the cache by the digest `locked` pins and is unpacked into `staging`. One line per program
/// ("install[0].files.llama-bench: arm64 slice built for macOS 14.0, loads on macOS 26.5.2"); a
/// program built for a newer macOS is an error (category verification, exit 6) naming the item,
/// the file, both versions and what to do.
Result<std::vector<std::string>>
check_pinned_programs(const recipe::Recipe& recipe,
                      const std::vector<recipe::LockedArtifact>& locked,
                      fetch::BlobCache& cache,
                      const fetch::FetchServices& services,
                      const StagingArea& staging,
                      const std::string& guest_macos);

/// Checks every enabled program that lies inside an archive item's destination against the
/// unpacked tree, before anything reaches the guest: a program the tree does not contain is a
/// usage error (exit 2) naming the entry, the item and what the tree holds (its executables
/// first), with a hint about strip_components when the name is there one folder deeper.
Status check_enabled_programs(const std::vector<StagedArtifact>& staged,
                              const enablement::EnablementList& enablement);

} // namespace lume_unlock::apply
