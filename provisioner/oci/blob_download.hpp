#pragma once

#include "oci/digest.hpp"
#include "oci/manifest.hpp"
#include "oci/reference.hpp"
#include "oci/registry_session.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace lume_unlock::oci {

// Reading blobs, behind RegistryClient (its header documents each one).

Result<std::optional<std::uint64_t>>
stat_blob(RegistrySession& session, const Reference& repository, const Digest& digest);

Status download_blob(RegistrySession& session,
                     const Reference& repository,
                     const Descriptor& blob,
                     const std::string& path);

} // namespace lume_unlock::oci
