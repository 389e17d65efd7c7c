#include "apply/artifact_installer.hpp"

#include "apply/programs.hpp"
#include "guest/guest_records.hpp"
#include "guest/payload.hpp"
#include "guest/shell_quote.hpp"
#include "lume/client.hpp"
#include "macho/macho.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace lume_unlock::apply {

namespace {

/// One guest file to have, from one staged artifact.
struct WantedFile {
  std::size_t artifact = 0;
  std::string guest_path;
  /// The regular file whose bytes it gets; for a link, the file the link leads to (checked
  /// to exist, so a broken archive is refused on the host).
  const fetch::UnpackedFile* bytes = nullptr;
  std::string link;    ///< non-empty: the guest path is a symbolic link to this target
  bool shared = false; ///< a link to the item's blob in the share (`bytes` is then null)
  mode_t mode = 0644;

  /// What guest::hash_guest_files reports for this path when it is as wanted.
  std::string state() const { return link.empty() ? bytes->sha256 : guest::link_state(link); }
};

/// The regular file a link of the tree stands for (links to links followed, at most 40 as the
/// kernel does); nullptr for a dangling or looping link.
const fetch::UnpackedFile* link_target(const std::vector<fetch::UnpackedFile>& files,
                                       const fetch::UnpackedFile& link) {
  const fetch::UnpackedFile* at = &link;
  for (int hops = 0; hops < 40 && at != nullptr && !at->symlink_target.empty(); ++hops) {
    // "a/../b" and "./b" resolved: safe_extract already refused links that leave the tree.
    const std::string normal =
        (std::filesystem::path(at->relative_path).parent_path() / at->symlink_target)
            .lexically_normal()
            .generic_string();
    const fetch::UnpackedFile* next = nullptr;
    for (const auto& file : files) {
      if (file.relative_path == normal) {
        next = &file;
      }
    }
    at = next;
  }
  return at != nullptr && at->symlink_target.empty() ? at : nullptr;
}

/// Where the guest sees the verified blob of `hex` through the shared cache.
std::string guest_blob_path(const GuestCacheShare& share, const std::string& hex) {
  return lume::guest_path_in_share(share.share_root, {cache_share(share.cache)}, 0, hex);
}

Result<std::vector<WantedFile>> wanted_files(const std::vector<StagedArtifact>& staged,
                                             const GuestCacheShare* share) {
  std::vector<WantedFile> wanted;
  for (std::size_t i = 0; i < staged.size(); ++i) {
    const StagedArtifact& artifact = staged[i];
    if (share != nullptr && artifact.item.share) {
      WantedFile want;
      want.artifact = i;
      want.guest_path = artifact.item.dest;
      want.link = guest_blob_path(*share, artifact.fetched.sha256);
      want.shared = true;
      wanted.push_back(want);
      continue;
    }
    for (const auto& file : artifact.files) {
      const fetch::UnpackedFile* bytes =
          file.symlink_target.empty() ? &file : link_target(artifact.files, file);
      if (bytes == nullptr) {
        return Error(ErrorCategory::verification,
                     artifact.item.field + " (" + artifact.source + ")",
                     "the link " + util::quote_for_message(file.relative_path) + " -> " +
                         util::quote_for_message(file.symlink_target) +
                         " points to no file of the archive",
                     "the archive is broken: fix the recipe's source or sha256");
      }
      WantedFile want;
      want.artifact = i;
      want.guest_path = recipe::guest_path_of(artifact.item, file.relative_path);
      want.bytes = bytes;
      want.link = file.symlink_target;
      want.mode = artifact.item.unpack == fetch::UnpackFormat::none ? artifact.item.mode
                  : bytes->executable                               ? 0755
                                                                    : 0644;
      wanted.push_back(want);
    }
  }
  return wanted;
}

/// A shared item's blob as the guest sees it through the share: it must be there, with the bytes
/// the cache verified. `found` is what guest::hash_guest_files read.
Status check_shared_blob(const StagedArtifact& artifact,
                         const std::string& blob,
                         const GuestCacheShare& share,
                         const std::map<std::string, std::string>& found) {
  const std::string& hex = artifact.fetched.sha256;
  const std::string what = artifact.item.field + " (" + artifact.source + ")";
  const auto seen = found.find(blob);
  if (seen == found.end()) {
    return Error(ErrorCategory::guest,
                 what,
                 "the guest does not see the cached blob at " + util::quote_for_message(blob) +
                     ": the VM runs without the host's cache " +
                     util::quote_for_message(cache_share(share.cache).host_path) +
                     " shared (it was started before, or not by lume-unlock)",
                 "stop the VM ('lume stop NAME') and run create again: it starts the VM with "
                 "the cache shared read-only; or remove share: true from the item");
  }
  if (seen->second != hex) {
    return Error(ErrorCategory::verification,
                 what,
                 "the blob the guest sees at " + util::quote_for_message(blob) +
                     " has sha256:" + seen->second + ", not the verified sha256:" + hex,
                 "the host's cached blob changed while the VM ran: run create again, which "
                 "fetches and verifies it anew");
  }
  return ok_status();
}

/// The Mach-O verdict of a host file against the shim, read through its headers only.
std::optional<std::string> macho_verdict(const std::string& host_path, const InstalledShim& shim) {
  auto image = read_host_program(host_path);
  if (!image.ok()) {
    return std::nullopt;
  }
  return std::string(
      macho::verdict_name(macho::judge_program(image.value(), shim_target(shim)).kind));
}

/// ONE command: for each destination, the nearest existing folder must be a writable directory.
Status check_writable(guest::GuestSession& session,
                      const std::vector<StagedArtifact>& staged,
                      const std::set<std::size_t>& artifacts) {
  std::string script =
      "w() { p=$2; while [ ! -e \"$p\" ] && [ ! -L \"$p\" ]; do p=${p%/*}; [ -n \"$p\" ] || p=/; "
      "done; if [ ! -d \"$p\" ] || [ ! -w \"$p\" ]; then printf '%s %s\\n' \"$1\" \"$p\"; exit 3; "
      "fi; }\n";
  for (const std::size_t i : artifacts) {
    const recipe::InstallItem& item = staged[i].item;
    const std::string root =
        item.unpack == fetch::UnpackFormat::none ? guest::parent_of(item.dest) : item.dest;
    LUME_UNLOCK_TRY_ASSIGN(auto quoted, guest::shell_quote(root));
    script += "w " + std::to_string(i) + " " + quoted + "\n";
  }
  LUME_UNLOCK_TRY_ASSIGN(auto ran, session.run(script + "exit 0"));
  if (ran.exit_status == 0) {
    return ok_status();
  }
  // "<index> <folder>": strtoul stops at the space (and reads 0 from nothing).
  const std::size_t index = std::strtoul(ran.stdout_text.c_str(), nullptr, 10);
  const auto space = ran.stdout_text.find(' ');
  const std::string folder =
      space == std::string::npos ? "" : util::trim(ran.stdout_text.substr(space + 1), "\n");
  const recipe::InstallItem& item = staged[index < staged.size() ? index : 0].item;
  return Error(ErrorCategory::guest,
               item.field + ": installing into " + util::quote_for_message(item.dest),
               "the guest user cannot write to " + util::quote_for_message(folder),
               "choose a dest the guest user owns (e.g. under /Users/<user>), or create it "
               "there first with 'lume-unlock ssh NAME -- sudo mkdir -p DIR && sudo chown "
               "$USER DIR'; nothing was sent");
}

/// The record of `artifact`, without its files.
provenance::ArtifactRecord record_of(const StagedArtifact& artifact) {
  provenance::ArtifactRecord record;
  record.source = artifact.source;
  record.sha256 = artifact.fetched.sha256;
  record.size = artifact.fetched.size;
  record.dest = artifact.item.dest;
  record.unpack = fetch::format_name(artifact.item.unpack);
  return record;
}

/// The provenance of each artifact: its source and digest, and each file as now in the guest
/// (executables with the verdict on injecting the shim into them).
std::vector<provenance::ArtifactRecord> artifact_records(const std::vector<StagedArtifact>& staged,
                                                         const std::vector<WantedFile>& wanted,
                                                         const InstalledShim& shim) {
  std::vector<provenance::ArtifactRecord> records;
  for (std::size_t i = 0; i < staged.size(); ++i) {
    const StagedArtifact& artifact = staged[i];
    provenance::ArtifactRecord record = record_of(artifact);
    for (const auto& want : wanted) {
      if (want.artifact != i) {
        continue;
      }
      provenance::ArtifactFile file;
      file.path = want.guest_path;
      if (want.shared) { // the link, with the bytes it leads to
        record.shared = true;
        file.link = want.link;
        file.sha256 = artifact.fetched.sha256;
        file.size = artifact.fetched.size;
      } else if (!want.link.empty()) {
        file.link = want.link;
      } else {
        file.sha256 = want.bytes->sha256;
        file.size = want.bytes->size;
        if ((want.mode & 0111) != 0) {
          file.macho = macho_verdict(want.bytes->host_path, shim);
        }
      }
      record.files.push_back(file);
    }
    records.push_back(record);
  }
  return records;
}

} // namespace

Result<ArtifactInstallReport> install_artifacts(guest::GuestSession& session,
                                                const std::vector<StagedArtifact>& staged,
                                                const InstalledShim& shim,
                                                const std::string& scratch_root,
                                                const util::ProgressCallback& progress,
                                                const GuestCacheShare* share) {
  ArtifactInstallReport report;
  const std::uint64_t commands_before = session.command_count();
  LUME_UNLOCK_TRY_ASSIGN(auto wanted, wanted_files(staged, share));
  std::vector<std::string> paths;
  for (const auto& want : wanted) {
    paths.push_back(want.guest_path);
    if (want.shared) {
      paths.push_back(want.link); // the blob through the share, hashed in the same command
    }
  }
  auto observed = guest::hash_guest_files(session, paths);
  if (!observed.ok()) {
    return observed.error().with_context("checking the installed artifacts");
  }
  std::vector<guest::PayloadFile> to_send;
  std::set<std::size_t> changed_artifacts;
  std::uint64_t bytes_to_send = 0;
  for (const auto& want : wanted) {
    if (want.shared) {
      ++report.shared_items;
      LUME_UNLOCK_TRY(
          check_shared_blob(staged[want.artifact], want.link, *share, observed.value()));
    } else {
      ++report.files_total;
    }
    const auto found = observed.value().find(want.guest_path);
    if (found != observed.value().end() && found->second == want.state()) {
      continue;
    }
    if (want.link.empty()) {
      to_send.push_back(guest::PayloadFile::file(
          want.guest_path, want.bytes->host_path, want.bytes->sha256, want.mode));
      bytes_to_send += want.bytes->size;
    } else {
      to_send.push_back(guest::PayloadFile::link(want.guest_path, want.link));
    }
    if (want.shared) {
      ++report.links_made;
    } else {
      ++report.files_sent;
    }
    changed_artifacts.insert(want.artifact);
  }

  if (!to_send.empty()) {
    LUME_UNLOCK_TRY(check_writable(session, staged, changed_artifacts));
    const std::string step =
        "upload " + (changed_artifacts.size() == 1
                         ? staged[*changed_artifacts.begin()].item.label()
                         : std::to_string(changed_artifacts.size()) + " artifacts");
    const auto sent = [&](std::size_t, std::uint64_t bytes) {
      if (progress) {
        progress(util::ProgressEvent{step, bytes, bytes_to_send, "bytes", {}, false});
      }
    };
    auto installed = guest::install_streamed_payload(session, to_send, scratch_root, sent);
    if (!installed.ok()) {
      return installed.error().with_context("installing the recipe's artifacts");
    }
    if (progress) {
      progress(util::ProgressEvent{step, bytes_to_send, bytes_to_send, "bytes", {}, true});
    }
    report.bytes_sent = installed.value().archive_bytes;
  }

  report.records = artifact_records(staged, wanted, shim);
  report.commands = session.command_count() - commands_before;
  return report;
}

lume::SharedDirectory cache_share(const fetch::BlobCache& cache) {
  // blob_path of any digest names the folder; the cache's own layout stays in BlobCache.
  const std::filesystem::path blob = cache.blob_path(std::string(64, '0'));
  std::error_code ec;
  std::filesystem::path folder = std::filesystem::absolute(blob.parent_path(), ec);
  if (ec) {
    folder = blob.parent_path();
  }
  return lume::SharedDirectory{folder.lexically_normal().string(), true};
}

bool any_shared(const std::vector<StagedArtifact>& staged) {
  return std::any_of(
      staged.begin(), staged.end(), [](const auto& artifact) { return artifact.item.share; });
}

} // namespace lume_unlock::apply
