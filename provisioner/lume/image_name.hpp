#pragma once

#include "oci/digest.hpp"
#include "oci/reference.hpp"
#include "util/result.hpp"

#include <string>

namespace lume_unlock::lume {

/// The immutable tag an image is reachable by when Lume can only address tags
/// (lume-oci.md §1.2): "sha256-<hex>", the same manifest bytes as the digest.
std::string digest_tag(const oci::Digest& digest);

/// An image as Lume names it in pulls and pushes: `name:tag` under `organization` on `registry`
/// (Lume builds the repository as <organization>/<name> and takes no digests).
struct LumeImage {
  std::string registry;
  std::string organization;
  std::string name;
  std::string tag;
  std::string reference() const { return registry + "/" + organization + "/" + name + ":" + tag; }
};

/// Splits `ref`'s repository at its first '/' into organization and name; `what` names the
/// operation in the error ("pull of 'x'", "push to 'x'"). A one-component repository is a usage
/// error: Lume always prepends an organization.
Result<LumeImage>
lume_image_for(const oci::Reference& ref, const std::string& tag, const std::string& what);

} // namespace lume_unlock::lume
