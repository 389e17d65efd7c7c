#pragma once

#include "guest/session.hpp"
#include "util/result.hpp"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace lume_unlock::guest {

/// One file to put into the guest: bytes in memory, a host file, or a symbolic link. Build it
/// with bytes(), file() or link().
struct PayloadFile {
  std::string path;           ///< absolute path in the guest where it ends up
  std::string content;        ///< bytes(): its bytes
  std::string source_path;    ///< file(): the host file to read (or stream) the bytes from
  std::string sha256;         ///< file(): the SHA-256 of source_path's bytes
  std::string symlink_target; ///< link(): `path` becomes a symbolic link to this target
  mode_t mode = 0644;         ///< set in the guest before the file is moved into place

  static PayloadFile bytes(std::string path, std::string content, mode_t mode = 0644) {
    return {std::move(path), std::move(content), {}, {}, {}, mode};
  }
  /// install_streamed_payload streams the file and never reads it whole: its `sha256` is what
  /// the guest's copy is checked against.
  static PayloadFile
  file(std::string path, std::string source_path, std::string sha256, mode_t mode = 0644) {
    return {std::move(path), {}, std::move(source_path), std::move(sha256), {}, mode};
  }
  /// Made in the scratch folder and renamed into place like a file, and rolled back like one.
  static PayloadFile link(std::string path, std::string target) {
    return {std::move(path), {}, {}, {}, std::move(target), 0644};
  }
  bool is_link() const { return !symlink_target.empty(); }
};

/// What one install cost.
struct PayloadReport {
  std::size_t files = 0;
  std::uint64_t archive_bytes = 0;
  std::uint64_t commands = 0; ///< remote commands run (GuestSession::command_count delta)
};

/// Installs `files` in the guest in a fixed number of round trips, whatever their number:
///  1. ONE deterministic tar.gz holds the files (as files/<index>), a SHA256SUMS manifest and a
///     generated install.sh (every guest path in it quoted with shell_quote); it is uploaded once
///     to <scratch_root>/payload-<random>.tar.gz (GuestSession::upload checks its SHA-256);
///  2. ONE command extracts it with the guest's tar into <scratch_root>/payload-<random>/,
///     checks every file with one `shasum -a 256 -c SHA256SUMS`, and runs install.sh: for each
///     file, mkdir -p of its parent, chmod, keep the previous file as a backup (hard link, or a
///     copy across volumes), then `mv -f` (an atomic rename) onto the final path. If any file
///     fails, the files already moved are put back from their backups (new files deleted), so
///     the guest holds the previous set. Either way the scratch directory and the archive are
///     removed.
/// Commands: 2 (3 when <scratch_root> does not exist yet: the upload creates it). `scratch_root`
/// should be on the same volume as the targets (GuestLayout::staging_dir()), so the renames are
/// atomic. Errors: a relative or duplicate path (usage); an upload, extraction or install failure
/// naming the file (guest); a file that does not match its SHA-256 after extraction
/// (verification). A dropped connection during step 2 can leave the guest half-way; the backups
/// then stay in the scratch directory.
Result<PayloadReport> install_payload(GuestSession& session,
                                      const std::vector<PayloadFile>& files,
                                      const std::string& scratch_root);

/// Progress of a streamed install: the index of the file being sent and the bytes sent so far
/// (of all files).
using StreamedProgress = std::function<void(std::size_t file, std::uint64_t bytes_sent)>;

/// install_payload() for files too large to hold in memory (models are gigabytes): each file's
/// source_path is streamed (GuestSession::send_file) to
/// <scratch_root>/payload-<random>/files/<index>. Then ONE command writes their SHA256SUMS and
/// the same install.sh, checks and installs all or none, and removes the scratch directory. Links
/// (symlink_target) cross no bytes: install.sh makes them in the scratch folder and renames them
/// into place with the files. Commands: 2, whatever the number and size of the files (transfers are
/// not commands; a failed send adds one that removes the scratch directory). `archive_bytes` counts
/// the bytes streamed. Errors as install_payload's; a file the transfer damaged is a
/// verification error naming it, with nothing changed.
Result<PayloadReport> install_streamed_payload(GuestSession& session,
                                               const std::vector<PayloadFile>& files,
                                               const std::string& scratch_root,
                                               const StreamedProgress& progress = {});

/// The install.sh that install_payload() ships for `files` (each already given its index by
/// position): exposed for unit tests.
Result<std::string> payload_install_script(const std::vector<PayloadFile>& files);

} // namespace lume_unlock::guest
