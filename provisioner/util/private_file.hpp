#pragma once

#include "util/result.hpp"

#include <string>

namespace lume_unlock::util {

/// Checks that a secret file (a private key, a credential file) is readable by its owner only,
/// as OpenSSH demands of keys. Fails with a usage error (exit 2) naming `what`, the mode found and
/// the `chmod 600` to run when group or others may read or write it, and with the errno text
/// when the file cannot be examined.
Status require_owner_only(const std::string& path, const std::string& what);

} // namespace lume_unlock::util
