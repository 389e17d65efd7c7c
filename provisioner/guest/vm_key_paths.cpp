#include "guest/vm_key_paths.hpp"

namespace lume_unlock::guest {

Result<VmKeyPaths> vm_key_paths(const std::string& state_dir, const std::string& vm) {
  if (vm.empty() || vm == "." || vm == ".." || vm.find('/') != std::string::npos ||
      vm.find('\0') != std::string::npos) {
    return Error(ErrorCategory::usage,
                 "VM name '" + vm + "'",
                 "not usable as a directory name under the state directory",
                 "use a Lume VM name made of letters, digits, '.', '_' and '-'");
  }
  VmKeyPaths paths;
  paths.directory = state_dir + "/vms/" + vm;
  paths.known_host = paths.directory + "/known_host";
  paths.private_key = paths.directory + "/ssh_ed25519";
  paths.public_key = paths.directory + "/ssh_ed25519.pub";
  return paths;
}

} // namespace lume_unlock::guest
