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

/// What putting the staged artifacts into the guest did.
struct ArtifactInstallReport {
  /// One per staged artifact, in recipe order, each guest file with its digest (and the Mach-O
  /// verdict of executables): the provenance record's `artifacts`.
  std::vector<provenance::ArtifactRecord> records;
  std::size_t files_total = 0;
  std::size_t files_sent = 0; ///< files that were missing or differed
  std::uint64_t bytes_sent = 0;
  std::uint64_t commands = 0;
  bool changed() const { return files_sent != 0; }
};

/// Puts every file of `staged` at its guest path, verified:
///  1. ONE command hashes every guest path (guest::hash_guest_files); files that already match
///     are left alone, so a second create sends nothing and runs no other command;
///  2. when some differ: ONE command checks that each destination can be written (the nearest
///     existing folder is writable), naming the first that cannot before any byte is sent;
///  3. the rest go through guest::install_streamed_payload (streamed over SFTP into
///     `scratch_root`, checked by SHA-256 in the guest, moved into place all or none).
/// A symbolic link in an archive is installed as a copy of the file it points to inside the
/// tree (a link out of the tree never gets here: safe_extract refuses it). Executables are
/// installed 0755, other archive files 0644, a single file with its item's mode. Progress: step
/// "upload <label>", bytes sent of the bytes to send.
Result<ArtifactInstallReport> install_artifacts(guest::GuestSession& session,
                                                const std::vector<StagedArtifact>& staged,
                                                const InstalledShim& shim,
                                                const std::string& scratch_root,
                                                const util::ProgressCallback& progress);

/// Items with `share: true` (issue 32): their verified blobs stay in the host's cache, the VM
/// runs with the cache's blob folder as a read-only shared directory, and each item's `dest`
/// becomes a symbolic link to its blob inside the share, so no byte crosses SSH.

/// The run request's share for `cache`: its blob folder (<root>/blobs/sha256, absolute: Lume
/// resolves it in its own process), read-only, so the guest can read the cache but never
/// change it.
lume::SharedDirectory cache_share(const fetch::BlobCache& cache);

/// Whether any staged item is to be shared (the VM then needs cache_share() when it starts).
bool any_shared(const std::vector<StagedArtifact>& staged);

/// What linking the shared items did.
struct SharedLinkReport {
  /// One per shared item, in the order given: `shared`, its one file the link (with the sha256
  /// and size of the blob it leads to).
  std::vector<provenance::ArtifactRecord> records;
  std::size_t links_made = 0; ///< links that were missing or led elsewhere
  bool changed() const { return links_made != 0; }
};

/// Links each shared item of `staged` (the others are ignored) at its dest to its blob in the
/// guest's view of the share, below `share_root`:
///  1. ONE command hashes every blob through the share and reads every dest (as
///     guest::hash_guest_files does). A blob the guest cannot see is a guest error (exit 5):
///     the VM runs without the share (started before, or by other means), with the fix; a
///     blob with other bytes than the cache verified is exit 6 naming both digests;
///  2. links that are missing or lead elsewhere are made through guest::install_streamed_payload
///     (links only: 0 bytes over SFTP), all or none.
/// `scratch_root` as for install_artifacts.
Result<SharedLinkReport> link_shared_artifacts(guest::GuestSession& session,
                                               const std::vector<StagedArtifact>& staged,
                                               const fetch::BlobCache& cache,
                                               const std::string& share_root,
                                               const std::string& scratch_root);

/// The records of the copied items (in order) and of the shared ones (in order) merged back
/// into the order of `staged`, as the provenance record lists them.
std::vector<provenance::ArtifactRecord>
in_recipe_order(const std::vector<StagedArtifact>& staged,
                const std::vector<provenance::ArtifactRecord>& copied,
                const std::vector<provenance::ArtifactRecord>& shared);

} // namespace lume_unlock::apply
