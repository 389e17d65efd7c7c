#include "launchctl.hpp"

namespace lume_unlock::enablement {

std::string gui_domain(std::uint32_t uid) {
  return "gui/" + std::to_string(uid);
}

Argv launchctl_bootstrap(std::uint32_t uid, const std::string& plist_path) {
  return {"launchctl", "bootstrap", gui_domain(uid), plist_path};
}

Argv launchctl_bootout(std::uint32_t uid, const std::string& label) {
  return {"launchctl", "bootout", gui_domain(uid) + "/" + label};
}

Argv launchctl_kickstart(std::uint32_t uid, const std::string& label) {
  return {"launchctl", "kickstart", "-k", gui_domain(uid) + "/" + label};
}

Argv launchctl_print(std::uint32_t uid, const std::string& label) {
  return {"launchctl", "print", gui_domain(uid) + "/" + label};
}

Argv plutil_lint(const std::vector<std::string>& paths) {
  Argv argv = {"plutil", "-lint"};
  argv.insert(argv.end(), paths.begin(), paths.end());
  return argv;
}

} // namespace lume_unlock::enablement
