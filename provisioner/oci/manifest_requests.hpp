#pragma once

#include "oci/digest.hpp"
#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "oci/registry_session.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>

namespace lume_unlock::oci {

// The manifest requests behind RegistryClient (its header documents each one).

Result<std::optional<ManifestHead>> find_manifest(RegistrySession& session, const Reference& ref);

Result<FetchedManifest> get_manifest(RegistrySession& session, const Reference& ref);

Result<Digest> push_manifest(RegistrySession& session,
                             const Reference& ref,
                             const std::string& bytes,
                             const std::string& media_type);

} // namespace lume_unlock::oci
