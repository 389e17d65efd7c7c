#pragma once

#include <optional>
#include <string>

namespace lume_unlock::lume {

/// The macOS host preference that lifts the feature level of the paravirtual Metal device Lume's
/// VMs get (DESIGN §8 step 1): `defaults read com.apple.gpusw.ParavirtualizedGraphics
/// ForceUnrestrictedDeviceFeatureLevel`. lume-unlock only reads it; it never changes the host.
struct HostPreference {
  bool readable = false; ///< false off macOS: the preference exists only on a Mac host
  std::string value;     ///< what `defaults read` printed, trimmed; empty when unset
  /// True when the preference is on ("1").
  bool set() const { return value == "1"; }
};

/// Reads the preference with `defaults read` (a constant command, no user input). Never fails:
/// a preference that cannot be read counts as unset. Off macOS, returns it not `readable`.
HostPreference read_host_preference();

/// create's preflight warning when the preference is readable and not set: the
/// describe_host_preference() line and k_host_preference_command. nullopt when it is set or not
/// readable.
std::optional<std::string> host_preference_warning(const HostPreference& preference);

/// doctor's line: "ForceUnrestrictedDeviceFeatureLevel is set", "… is not set" or "… is '<v>'".
std::string describe_host_preference(const HostPreference& preference);

/// The command that sets the preference, as upstream and mac-realities give it (a bool, not
/// `-int 1`). Every hint that names a way to set it uses this constant.
inline constexpr const char* k_host_preference_command =
    "defaults write com.apple.gpusw.ParavirtualizedGraphics "
    "ForceUnrestrictedDeviceFeatureLevel -bool true";

/// How doctor tells the user to set the preference: the command, then restart the VM.
inline const std::string k_host_preference_fix =
    std::string(k_host_preference_command) + " (then stop and start the VM)";

} // namespace lume_unlock::lume
