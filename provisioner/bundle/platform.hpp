#pragma once

#include "bundle/manifest.hpp"
#include "util/result.hpp"

#include <string>
#include <string_view>

namespace lume_unlock::bundle {

/// The bundle platform name for a guest: `system` is `uname -s` ("Darwin", "Linux"), `arch` is
/// `uname -m`, or the program's own architecture when it differs (an arm64e binary on an arm64
/// kernel gets the arm64e dylib). Darwin+arm64 -> darwin-arm64, Darwin+arm64e -> darwin-arm64e,
/// Linux+x86_64 -> linux-x86_64 (aarch64 is spelled arm64, amd64 x86_64).
/// Fails for a system other than Darwin or Linux.
Result<std::string> guest_platform_name(std::string_view system, std::string_view arch);

/// The entry of `manifest` that matches the guest, with its name. When the bundle has none the
/// error lists the platforms it has (category verification).
struct SelectedPlatform {
  std::string name;
  PlatformEntry entry;
};
Result<SelectedPlatform>
select_platform(const BundleManifest& manifest, std::string_view system, std::string_view arch);

} // namespace lume_unlock::bundle
