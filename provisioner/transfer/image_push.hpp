#pragma once

#include "lume/api.hpp"
#include "oci/digest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "util/progress.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace lume_unlock::transfer {

/// Push a stopped Lume VM to a registry and find out what was pushed (lume-oci.md §2.4: Lume's
/// push answers 202, reports its outcome only in its log, and never says the digest).
struct ImagePushRequest {
  std::string vm;
  oci::Reference target; ///< registry/org/name:tag (a tag, no digest)
  std::optional<std::uint32_t> chunk_size_mb;
  /// How long to wait for the pushed manifest to appear. Lume gives no failure signal, so a
  /// failed push is only noticed when this passes.
  std::chrono::milliseconds timeout{std::chrono::hours(3)};
  std::chrono::milliseconds poll_interval{std::chrono::seconds(2)};
  util::ProgressCallback progress;
  /// Put the pushed manifest under the immutable tag sha256-<hex> too. Off when a later step
  /// replaces the manifest (annotate_pushed_image): the immutable tag must name the digest
  /// that gets recorded, and then Lume's own manifest is never tagged by us.
  bool tag_immutable = true;
  /// Time for the poll loop (tests replace it). Null = the steady clock and sleep_for.
  std::function<void(std::chrono::milliseconds)> sleep;
};

struct PushedImage {
  oci::Reference reference;  ///< as pushed (with the tag)
  oci::Digest digest;        ///< the manifest digest the registry holds for the push
  std::string pinned;        ///< registry/org/name@sha256:…
  std::string immutable_tag; ///< sha256-<hex>, pointing at the same manifest bytes; empty
                             ///< when the request's tag_immutable was off
  std::string pushed_at;     ///< the manifest's org.trycua.lume.upload-time (else our clock)
  std::uint64_t disk_bytes_verified = 0;
};

/// PUTs manifest `bytes` (of `digest`, media type `media_type`) under the immutable tag
/// sha256-<hex> in `target`'s repository and checks the digest the registry answers. Returns
/// the tag. Fails (category registry, naming `what`) when the registry stores other bytes.
Result<std::string> put_immutable_tag(oci::RegistryClient& registry,
                                      const oci::Reference& target,
                                      const std::string& bytes,
                                      const std::string& media_type,
                                      const oci::Digest& digest,
                                      const std::string& what);

/// Notes what the tag points at now, asks Lume to push (`POST /lume/vms/push`), then polls the
/// tag until it points at a new manifest. That manifest must be this VM's push: its NVRAM and
/// disk slices must hash to the VM directory's (pushed_image_check), otherwise someone else
/// moved the tag and nothing is recorded (registry error). Then (with tag_immutable) PUTs the
/// same manifest bytes under the immutable tag `sha256-<hex>` (put_immutable_tag).
/// Failures: Lume refuses the push (lume_api), the tag never moves before the deadline
/// (lume_api, pointing at Lume's log), the registry fails (registry).
Result<PushedImage>
push_image(lume::LumeApi& lume, oci::RegistryClient& registry, const ImagePushRequest& request);

} // namespace lume_unlock::transfer
