#pragma once

#include "oci/digest.hpp"
#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_session.hpp"
#include "oci/upload_source.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>

namespace lume_unlock::oci {

/// Uploads `source` as a blob of `repository` (RegistryClient::push_blob_file documents the
/// requests): skipped when `known_digest` is already there, else POST, then one PUT with the
/// known digest, or PATCH chunks hashed while sent and a PUT with the computed digest; always
/// cross-checked with a HEAD.
Result<Descriptor> push_blob(RegistrySession& session,
                             const Reference& repository,
                             const UploadSource& source,
                             const std::string& media_type,
                             const std::optional<Digest>& known_digest);

} // namespace lume_unlock::oci
