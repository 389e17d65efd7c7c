#pragma once

#include "util/result.hpp"

#include <string>
#include <string_view>

namespace lume_unlock::lume {

/// Checks a VM name before it reaches Lume. Lume itself validates nothing (reference §7): '/',
/// '..', spaces, ':' and '%' make a VM unreachable or escape its location, so only
/// [A-Za-z0-9._-] is accepted, not "." or "..", at most 255 bytes (one directory name).
/// Fails with a usage error (exit 2) that quotes the name and names the first bad character.
Status check_vm_name(std::string_view name);

} // namespace lume_unlock::lume
