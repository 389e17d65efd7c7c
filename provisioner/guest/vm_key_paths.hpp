#pragma once

#include "util/result.hpp"

#include <string>

namespace lume_unlock::guest {

/// The per-VM files in the host's state directory.
struct VmKeyPaths {
  std::string directory;   ///< <state>/vms/<vm>
  std::string known_host;  ///< the pinned host key: "<type> <base64>\n"
  std::string private_key; ///< OpenSSH-format ed25519 private key, mode 0600
  std::string public_key;  ///< "<type> <base64> lume-unlock@<vm>\n"
};

/// The paths for `vm`; a usage error when the name could escape <state>/vms/.
Result<VmKeyPaths> vm_key_paths(const std::string& state_dir, const std::string& vm);

} // namespace lume_unlock::guest
