#pragma once

#include "bundle/loader.hpp"
#include "oci/digest.hpp"
#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "util/archive.hpp"
#include "util/result.hpp"

#include <string>

namespace lume_unlock::transfer {

/// A shim bundle fetched from a registry: the verified bundle, and which artifact it came from.
struct FetchedBundle {
  bundle::LoadedBundle bundle;
  oci::Reference reference; ///< as asked for; its digest is the manifest's, verified
  oci::Descriptor layer;    ///< the archive the bundle was extracted from
};

/// Fetches the shim bundle artifact that publish_bundle() writes (DESIGN §4.4) and loads it:
///   - `ref` must name a digest (usage error otherwise: a tag can move under a recipe);
///   - the manifest is fetched by that digest (its bytes must hash to it);
///   - it must be an image manifest with artifactType application/vnd.lume-unlock.shim-bundle.v1,
///     a config of application/vnd.lume-unlock.shim-bundle.config.v1+json and exactly one layer
///     of application/vnd.lume-unlock.shim-bundle.layer.v1.tar+gzip no larger than
///     limits.max_total_bytes;
///   - the layer is streamed to a temporary file, checked against its digest and size, and
///     loaded with bundle::load_bundle_archive (safe extraction, every file against bundle.json);
///   - the config must be the bundle.json inside the archive, byte for byte.
/// Registry failures and artifacts that are not a consistent shim bundle fail with category
/// registry (exit 4), naming the reference; a layer whose files do not match its own
/// bundle.json fails as the loader does (verification). The extracted copy lives under
/// `work_directory` (the system's temporary directory when empty) as long as the bundle does;
/// the downloaded archive is removed before returning.
Result<FetchedBundle> fetch_bundle(oci::RegistryClient& registry,
                                   const oci::Reference& ref,
                                   const std::string& work_directory = {},
                                   const util::ExtractLimits& limits = {});

} // namespace lume_unlock::transfer
