#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace lume_unlock::util {

/// One progress report from library code (which never prints). The CLI renders these: a bar
/// that overprints on a terminal, at most one changed line a second otherwise, JSON lines with
/// --json.
struct ProgressEvent {
  std::string step;                  ///< "pull", "install shim", ...
  std::optional<std::uint64_t> done; ///< units done (bytes, percent, files)
  std::optional<std::uint64_t> total;
  std::string unit;   ///< "bytes", "%", "" for none
  std::string detail; ///< short free text ("waiting for SSH on 192.168.64.9")
  bool finished = false;
};

using ProgressCallback = std::function<void(const ProgressEvent&)>;

} // namespace lume_unlock::util
