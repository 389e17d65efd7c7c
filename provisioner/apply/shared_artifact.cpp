#include "apply/shared_artifact.hpp"

#include "guest/file_hashes.hpp"
#include "guest/payload.hpp"
#include "lume/storage.hpp"
#include "util/text_check.hpp"

#include <filesystem>

namespace lume_unlock::apply {

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

std::string guest_blob_path(const fetch::BlobCache& cache,
                            const std::string& share_root,
                            const std::string& sha256_hex) {
  return lume::guest_path_in_share(share_root, {cache_share(cache)}, 0, sha256_hex);
}

bool any_shared(const std::vector<StagedArtifact>& staged) {
  for (const auto& artifact : staged) {
    if (artifact.item.share) {
      return true;
    }
  }
  return false;
}

Result<SharedLinkReport> link_shared_artifacts(guest::GuestSession& session,
                                               const std::vector<StagedArtifact>& staged,
                                               const fetch::BlobCache& cache,
                                               const std::string& share_root,
                                               const std::string& scratch_root) {
  SharedLinkReport report;
  std::vector<const StagedArtifact*> shared;
  std::vector<std::string> paths;
  for (const auto& artifact : staged) {
    if (artifact.item.share) {
      shared.push_back(&artifact);
      paths.push_back(artifact.item.dest);
      paths.push_back(guest_blob_path(cache, share_root, artifact.fetched.sha256));
    }
  }
  if (shared.empty()) {
    return report;
  }
  auto observed = guest::hash_guest_files(session, paths);
  if (!observed.ok()) {
    return observed.error().with_context("checking the shared artifacts");
  }
  const auto& found = observed.value();
  std::vector<guest::PayloadFile> links;
  for (const StagedArtifact* artifact : shared) {
    const std::string& hex = artifact->fetched.sha256;
    const std::string blob = guest_blob_path(cache, share_root, hex);
    const std::string what = artifact->item.field + " (" + artifact->source + ")";
    const auto seen = found.find(blob);
    if (seen == found.end()) {
      return Error(ErrorCategory::guest,
                   what,
                   "the guest does not see the cached blob at " + util::quote_for_message(blob) +
                       ": the VM runs without the host's cache " +
                       util::quote_for_message(cache_share(cache).host_path) +
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
    provenance::ArtifactRecord record;
    record.source = artifact->source;
    record.sha256 = hex;
    record.size = artifact->fetched.size;
    record.dest = artifact->item.dest;
    record.unpack = fetch::format_name(artifact->item.unpack);
    record.shared = true;
    provenance::ArtifactFile file;
    file.path = artifact->item.dest;
    file.link = blob;
    file.sha256 = hex;
    file.size = artifact->fetched.size;
    record.files.push_back(file);
    report.records.push_back(record);

    const auto at_dest = found.find(artifact->item.dest);
    if (at_dest == found.end() || at_dest->second != guest::link_state(blob)) {
      guest::PayloadFile link;
      link.path = artifact->item.dest;
      link.symlink_target = blob;
      links.push_back(link);
    }
  }
  if (!links.empty()) {
    auto installed = guest::install_streamed_payload(session, links, scratch_root);
    if (!installed.ok()) {
      return installed.error().with_context("linking the shared artifacts");
    }
    report.links_made = links.size();
  }
  return report;
}

std::vector<provenance::ArtifactRecord>
in_recipe_order(const std::vector<StagedArtifact>& staged,
                const std::vector<provenance::ArtifactRecord>& copied,
                const std::vector<provenance::ArtifactRecord>& shared) {
  std::vector<provenance::ArtifactRecord> out;
  std::size_t next_copied = 0;
  std::size_t next_shared = 0;
  for (const auto& artifact : staged) {
    if (artifact.item.share && next_shared < shared.size()) {
      out.push_back(shared[next_shared++]);
    } else if (!artifact.item.share && next_copied < copied.size()) {
      out.push_back(copied[next_copied++]);
    }
  }
  return out;
}

} // namespace lume_unlock::apply
