#include "transfer/image_annotate.hpp"

#include "oci/manifest.hpp"

namespace lume_unlock::transfer {

Result<PushedImage> annotate_pushed_image(oci::RegistryClient& registry,
                                          const PushedImage& pushed,
                                          const oci::Annotations& annotations) {
  const std::string what = "annotating " + pushed.pinned;
  // By digest: the bytes are those push_image checked against the VM's disk, whatever the
  // tag says now.
  LUME_UNLOCK_TRY_ASSIGN(auto fetched,
                         registry.get_manifest(pushed.reference.pinned(pushed.digest)));
  LUME_UNLOCK_TRY_ASSIGN(auto bytes, oci::with_manifest_annotations(fetched.bytes, annotations));
  LUME_UNLOCK_TRY_ASSIGN(auto annotated, oci::parse_manifest(bytes));
  if (!(annotated.config == fetched.manifest.config) ||
      !(annotated.layers == fetched.manifest.layers) ||
      annotated.media_type != fetched.manifest.media_type) {
    return Error(ErrorCategory::registry,
                 what,
                 "the annotated manifest names other blobs than the pushed one",
                 "nothing was recorded; report this as a bug");
  }
  const oci::Digest digest = oci::Digest::of_bytes(bytes);

  // The tag must still be this push's: replacing someone else's image would be worse than not
  // annotating.
  LUME_UNLOCK_TRY_ASSIGN(auto current, registry.find_manifest(pushed.reference));
  if (!current || (current->digest != pushed.digest && current->digest != digest)) {
    return Error(ErrorCategory::registry,
                 what,
                 "the tag " + pushed.reference.str() + " no longer points at the push (" +
                     (current ? "now " + current->digest.str() : std::string("gone")) + ")",
                 "nothing was recorded; push to a tag only you use and run the command again");
  }
  LUME_UNLOCK_TRY_ASSIGN(auto stored,
                         registry.push_manifest(pushed.reference, bytes, fetched.media_type));
  if (stored != digest) {
    return Error(ErrorCategory::registry,
                 what,
                 "the registry stored the annotated manifest as " + stored.str() + ", not " +
                     digest.str(),
                 "nothing was recorded; check the registry");
  }
  // The immutable tag names the annotated digest, the one recorded and signed. Lume's own
  // manifest (the old digest) was never given one (push_image ran with tag_immutable off), so
  // no tag names a digest nobody recorded. It is left in the registry untagged, not deleted:
  // deleting a manifest is optional in the distribution spec (docker-registry only with
  // storage.delete.enabled, ghcr.io not through this API), a failure there would fail a
  // finished bake for nothing, and a registry's garbage collection reclaims untagged
  // manifests while the blobs stay shared with the annotated one.
  LUME_UNLOCK_TRY_ASSIGN(
      auto immutable_tag,
      put_immutable_tag(registry, pushed.reference, bytes, fetched.media_type, digest, what));

  PushedImage out = pushed;
  out.digest = digest;
  out.pinned = pushed.reference.pinned(digest).str();
  out.immutable_tag = immutable_tag;
  return out;
}

} // namespace lume_unlock::transfer
