#pragma once

#include "lume/image_name.hpp"
#include "lume/types.hpp"
#include "util/result.hpp"

#include <string>

namespace lume_unlock::lume {

/// Lume 0.5.3 reaches registries over https only: ImageContainerRegistry.swift builds every
/// URL as https://<registry>/… (getToken, fetchManifest, downloadLayer, the uploads) and has no
/// insecure mode. Returns ok when `registry_url` (where our client reaches the registry Lume is
/// to be sent to, e.g. "https://host:5000") is https; otherwise a usage Error (exit 2) for
/// `what`, so the refusal comes before Lume is asked.
Status require_https_registry(const std::string& registry_url, const std::string& what);

/// Lume replaces its defaults: when a pull or push names registry "ghcr.io" and organization
/// "trycua", RegistryFactory.createRegistry uses the registry of Lume's config.yaml instead
/// (`registry.ghcr.registry` / `.organization`, or the GCS backend for `registry.type: gcs`).
/// Returns ok when `image` is not on the defaults or Lume's setting is the defaults too;
/// otherwise a usage Error (exit 2) naming Lume's setting, since Lume would fetch another image
/// than the one resolved and checked here.
Status require_no_registry_override(const LumeImage& image,
                                    const RegistrySetting& setting,
                                    const std::string& what);

} // namespace lume_unlock::lume
