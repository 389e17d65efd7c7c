#include "lume/host_preference.hpp"

#include <cstdio>

namespace lume_unlock::lume {

HostPreference read_host_preference() {
  HostPreference preference;
#ifdef __APPLE__
  preference.readable = true;
  FILE* pipe = ::popen("defaults read com.apple.gpusw.ParavirtualizedGraphics "
                       "ForceUnrestrictedDeviceFeatureLevel 2>/dev/null",
                       "r");
  if (pipe != nullptr) {
    char buffer[64];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
      preference.value += buffer;
    }
    ::pclose(pipe);
  }
  std::string& value = preference.value;
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) {
    value.pop_back();
  }
#endif
  return preference;
}

std::optional<std::string> host_preference_warning(const HostPreference& preference) {
  if (!preference.readable || preference.set()) {
    return std::nullopt;
  }
  return "the host preference com.apple.gpusw.ParavirtualizedGraphics " +
         describe_host_preference(preference) + "; set it yourself with '" +
         k_host_preference_command + "' and restart the VM (lume-unlock never changes the host)";
}

std::string describe_host_preference(const HostPreference& preference) {
  if (preference.set()) {
    return "ForceUnrestrictedDeviceFeatureLevel is set";
  }
  return preference.value.empty()
             ? "ForceUnrestrictedDeviceFeatureLevel is not set"
             : "ForceUnrestrictedDeviceFeatureLevel is '" + preference.value + "'";
}

} // namespace lume_unlock::lume
