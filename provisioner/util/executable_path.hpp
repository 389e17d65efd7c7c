#pragma once

#include <optional>
#include <string>

namespace lume_unlock::util {

/// The absolute path of the running executable with symlinks resolved (so a Homebrew
/// `bin/lume-unlock` link leads to the keg it came from): /proc/self/exe on Linux,
/// _NSGetExecutablePath on macOS. Nothing when the system cannot say.
std::optional<std::string> executable_path();

} // namespace lume_unlock::util
