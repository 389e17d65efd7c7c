#pragma once

#include "oci/manifest.hpp"
#include "oci/registry_client.hpp"
#include "transfer/image_push.hpp"
#include "util/result.hpp"

namespace lume_unlock::transfer {

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
