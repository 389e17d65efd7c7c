#pragma once

#include "apply/artifact_stage.hpp"
#include "apply/shim_installer.hpp"
#include "fetch/fetch.hpp"
#include "guest/session.hpp"
#include "lume/types.hpp"
#include "provenance/provenance.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace lume_unlock::apply {

/// Items with `share: true` (issue 32): their verified blobs stay in the host's cache, the VM
/// runs with the cache's blob folder as a read-only shared directory, and each item's `dest`
/// becomes a symbolic link to its blob inside the share, so no byte crosses SSH.

/// The run request's share for `cache`: its blob folder (<root>/blobs/sha256, absolute: Lume
/// resolves it in its own process), read-only, so the guest can read the cache but never
/// change it.
lume::SharedDirectory cache_share(const fetch::BlobCache& cache);

/// Whether any staged item is to be shared (the VM then needs cache_share() when it starts).
bool any_shared(const std::vector<StagedArtifact>& staged);

/// Where the guest sees the host's cache: cache_share(cache) mounted below `share_root`.
struct GuestCacheShare {
  const fetch::BlobCache& cache;
  std::string share_root;
};

/// What putting the staged artifacts into the guest did.
struct ArtifactInstallReport {
  /// One per staged artifact, in recipe order, each guest file with its digest (and the Mach-O
  /// verdict of executables): the provenance record's `artifacts`. A linked shared item is
  /// `shared`, its one file the link (with the sha256 and size of the blob it leads to).
  std::vector<provenance::ArtifactRecord> records;
  std::size_t files_total = 0; ///< copied files
  std::size_t files_sent = 0;  ///< copied files that were missing or differed
  std::uint64_t bytes_sent = 0;
  std::size_t shared_items = 0; ///< items linked into the share
  std::size_t links_made = 0;   ///< of those, links that were missing or led elsewhere
  std::uint64_t commands = 0;
  bool changed() const { return files_sent != 0 || links_made != 0; }
};

/// Puts every file of `staged` at its guest path, verified. With `share`, each `share: true`
/// item's dest becomes a link to its blob in the guest's view of the share instead of a copy.
///  1. ONE command hashes every guest path and, with `share`, every shared blob through the
///     share (guest::hash_guest_files); paths that already match are left alone, so a second
///     create sends nothing and runs no other command. A blob the guest cannot see is a guest
///     error (exit 5): the VM runs without the share (started before, or by other means), with
///     the fix; a blob with other bytes than the cache verified is exit 6 naming both digests.
///     Either is refused before anything changes;
///  2. when some differ: ONE command checks that each destination can be written (the nearest
///     existing folder is writable), naming the first that cannot before any byte is sent;
///  3. the rest, files and links together, go through guest::install_streamed_payload
///     (streamed over SFTP into `scratch_root`, checked by SHA-256 in the guest, moved into
///     place all or none).
/// A symbolic link in an archive is installed as a copy of the file it points to inside the
/// tree (a link out of the tree never gets here: safe_extract refuses it). Executables are
/// installed 0755, other archive files 0644, a single file with its item's mode. Progress: step
/// "upload <label>", bytes sent of the bytes to send.
Result<ArtifactInstallReport> install_artifacts(guest::GuestSession& session,
                                                const std::vector<StagedArtifact>& staged,
                                                const InstalledShim& shim,
                                                const std::string& scratch_root,
                                                const util::ProgressCallback& progress,
                                                const GuestCacheShare* share = nullptr);

} // namespace lume_unlock::apply
