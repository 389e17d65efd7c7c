#pragma once

#include "pipeline/status.hpp"
#include "provenance/provenance.hpp"

#include <map>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// What `status` and `verify` check of one shared item's file (`file.link` its blob inside the
/// share, `file.sha256` the verified bytes), against `found` (hash_guest_files of
/// artifact_paths()): the link itself, and the bytes the guest reads through it, which are the
/// host's cached blob. Each that differs has a fix: a missing blob means the VM runs without
/// the share, other bytes mean the cached blob changed on the host.
std::vector<StatusItem> shared_artifact_items(const provenance::Provenance& record,
                                              const provenance::ArtifactFile& file,
                                              const std::map<std::string, std::string>& found);

} // namespace lume_unlock::pipeline
