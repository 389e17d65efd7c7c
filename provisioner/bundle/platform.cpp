#include "platform.hpp"

#include "util/text.hpp"

namespace lume_unlock::bundle {

namespace {

std::string guest_text(std::string_view system, std::string_view arch) {
  return "'" + std::string(system) + " " + std::string(arch) + "'";
}

std::string list_platforms(const BundleManifest& manifest) {
  return util::join(manifest.platforms, ", ", [](const auto& platform) { return platform.first; });
}

} // namespace

Result<std::string> guest_platform_name(std::string_view system, std::string_view arch) {
  std::string os;
  if (system == "Darwin") {
    os = "darwin";
  } else if (system == "Linux") {
    os = "linux";
  } else {
    return Error(ErrorCategory::verification,
                 "unsupported guest " + guest_text(system, arch),
                 "the shim runs in macOS (Darwin) guests, and in Linux for tests");
  }
  std::string machine(arch);
  if (machine == "aarch64") {
    machine = "arm64";
  } else if (machine == "amd64") {
    machine = "x86_64";
  }
  if (machine.empty()) {
    return Error(ErrorCategory::verification,
                 "unsupported guest " + guest_text(system, arch),
                 "the architecture is empty");
  }
  return os + "-" + machine;
}

Result<SelectedPlatform>
select_platform(const BundleManifest& manifest, std::string_view system, std::string_view arch) {
  auto name = guest_platform_name(system, arch);
  if (!name) {
    return name.error().with_hint("this bundle has " + list_platforms(manifest));
  }
  auto found = manifest.platforms.find(name.value());
  if (found == manifest.platforms.end()) {
    return Error(ErrorCategory::verification,
                 "no shim for guest " + guest_text(system, arch) + " (" + name.value() + ")",
                 "bundle " + manifest.version + " has " + list_platforms(manifest),
                 "use a bundle built with a " + name.value() + " entry");
  }
  return SelectedPlatform{found->first, found->second};
}

} // namespace lume_unlock::bundle
