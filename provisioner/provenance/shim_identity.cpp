#include "provenance/shim_identity.hpp"

namespace lume_unlock::provenance {

const std::vector<CertifiedBuild>& certified_builds() {
  static const std::vector<CertifiedBuild> builds = {
      {"LumeMetalCapabilities-arm64.dylib",
       "515b9d84ab67e86d959282e95c194a5ad8a947261514b947d6f7483c57797b31"},
      {"LumeMetalCapabilities-arm64e.dylib",
       "62504be341ed74191eab22f19e21d99b2afbe6cc029902c760578ffbbd0588cb"},
  };
  return builds;
}

std::optional<CertifiedBuild> certified_build(std::string_view sha256) {
  for (const CertifiedBuild& build : certified_builds()) {
    if (sha256 == build.sha256) {
      return build;
    }
  }
  return std::nullopt;
}

std::string shim_that_ran(const ShimInfo& shim) {
  if (shim.external) {
    const std::string& digest = shim.external->sha256;
    return certified_build(digest) ? "certified upstream build " + digest.substr(0, 8) + "…"
                                   : "external shim " + digest;
  }
  if (shim.files && !shim.files->empty()) {
    return "lume-unlock shim " + shim.files->front().sha256;
  }
  return {};
}

} // namespace lume_unlock::provenance
