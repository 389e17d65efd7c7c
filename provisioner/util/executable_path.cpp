#include "util/executable_path.hpp"

#include <cstdint>
#include <filesystem>
#include <vector>

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

namespace lume_unlock::util {

namespace {

/// Where the system says the executable is, possibly through symlinks.
std::optional<std::string> reported_path() {
#if defined(__APPLE__)
  std::uint32_t size = 0;
  _NSGetExecutablePath(nullptr, &size); // asks for the size first
  std::vector<char> buffer(size + 1, '\0');
  if (_NSGetExecutablePath(buffer.data(), &size) != 0) {
    return std::nullopt;
  }
  return std::string(buffer.data());
#elif defined(__linux__)
  return std::string("/proc/self/exe");
#else
  return std::nullopt;
#endif
}

} // namespace

std::optional<std::string> executable_path() {
  auto reported = reported_path();
  if (!reported) {
    return std::nullopt;
  }
  std::error_code ec;
  const std::filesystem::path resolved = std::filesystem::canonical(*reported, ec);
  if (ec) {
    return std::nullopt;
  }
  return resolved.string();
}

} // namespace lume_unlock::util
