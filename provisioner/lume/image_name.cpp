#include "lume/image_name.hpp"

namespace lume_unlock::lume {

std::string digest_tag(const oci::Digest& digest) {
  return "sha256-" + digest.hex();
}

Result<LumeImage>
lume_image_for(const oci::Reference& ref, const std::string& tag, const std::string& what) {
  const auto slash = ref.repository.find('/');
  if (slash == std::string::npos) {
    return Error(ErrorCategory::usage,
                 what,
                 "Lume uses only <organization>/<name> repositories, and '" + ref.repository +
                     "' has no organization",
                 "use a repository with two components, e.g. " + ref.registry + "/myorg/" +
                     ref.repository);
  }
  return LumeImage{
      ref.registry, ref.repository.substr(0, slash), ref.repository.substr(slash + 1), tag};
}

} // namespace lume_unlock::lume
