#pragma once

#include "oci/digest.hpp"
#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "util/result.hpp"

#include <string>

namespace lume_unlock::transfer {

/// A shim bundle published as an OCI artifact (DESIGN §4.4).
struct PublishedBundle {
  oci::Reference reference; ///< as tagged
  oci::Digest digest;       ///< the manifest digest (checked against the registry's answer)
  std::string version;      ///< bundle.json's version
  oci::Manifest manifest;
};

/// Verifies the archive (extracted through util::safe_extract by the bundle loader, every file
/// checked against bundle.json), then pushes an artifact manifest under ref's tag:
/// artifactType application/vnd.lume-unlock.shim-bundle.v1, config = bundle.json's bytes
/// (application/vnd.lume-unlock.shim-bundle.config.v1+json), one layer = the archive itself
/// (application/vnd.lume-unlock.shim-bundle.layer.v1.tar+gzip, titled with its file name). No
/// timestamps: the same archive under the same name gives the same digest. `ref` needs a tag
/// and no digest (usage error otherwise).
Result<PublishedBundle> publish_bundle(oci::RegistryClient& registry,
                                       const std::string& archive,
                                       const oci::Reference& ref);

} // namespace lume_unlock::transfer
