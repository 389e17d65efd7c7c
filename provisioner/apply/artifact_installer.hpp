#pragma once

#include "apply/artifact_stage.hpp"
#include "apply/shim_record.hpp"
#include "guest/session.hpp"
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

} // namespace lume_unlock::apply
