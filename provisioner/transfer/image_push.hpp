#pragma once

#include "lume/client.hpp"
#include "oci/manifest.hpp"
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

/// Notes what the tag points at now, asks Lume to push (`POST /lume/vms/push`), then polls the
/// tag until it points at a new manifest. That manifest must be this VM's push: its NVRAM and
/// disk slices must hash to the VM directory's (pushed_image_check), otherwise someone else
/// moved the tag and nothing is recorded (registry error). Then (with tag_immutable) PUTs the
/// same manifest bytes under the immutable tag `sha256-<hex>`, checking the digest it answers.
/// Failures: Lume refuses the push (lume_api), the tag never moves before the deadline
/// (lume_api, pointing at Lume's log), the registry fails (registry).
Result<PushedImage>
push_image(lume::LumeApi& lume, oci::RegistryClient& registry, const ImagePushRequest& request);

/// Adds manifest-level `annotations` to an image push_image pushed (with tag_immutable off,
/// since the digest changes here): fetches the pushed manifest by its digest, merges the
/// annotations (oci::with_manifest_annotations; config and layers stay the same descriptors,
/// checked), PUTs the result under the pushed tag, if that still points at the push, and under
/// the immutable tag sha256-<hex> of the new digest. Returns `pushed` with the new digest,
/// pinned reference and immutable tag. Fails (category registry) when the registry fails or
/// the tag moved in between (someone else pushed to it).
Result<PushedImage> annotate_pushed_image(oci::RegistryClient& registry,
                                          const PushedImage& pushed,
                                          const oci::Annotations& annotations);

} // namespace lume_unlock::transfer
