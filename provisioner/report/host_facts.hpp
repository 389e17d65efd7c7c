#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::report {

/// What the Mac that runs the VM says about itself. Read on macOS only (sw_vers, sysctl,
/// system_profiler); elsewhere `mac` is false and every fact is absent.
struct HostFacts {
  bool mac = false;
  std::optional<std::string> macos_version; ///< `sw_vers -productVersion`
  std::optional<std::string> macos_build;   ///< `sw_vers -buildVersion`
  std::optional<std::string> chip;          ///< `sysctl -n machdep.cpu.brand_string`
  std::optional<std::int64_t> gpu_cores;    ///< system_profiler's sppci_cores
};

/// The GPU core count in `system_profiler SPDisplaysDataType -json` output: the first display
/// adapter's "sppci_cores" (a string of digits there). Absent when the text is not that JSON
/// or names no count.
std::optional<std::int64_t> gpu_cores_from_system_profiler(std::string_view json_text);

/// A command's output without its trailing newline; absent when empty.
std::optional<std::string> trimmed_fact(std::string_view output);

/// {"mac": bool, "macos_version", "macos_build", "chip", "gpu_cores"}, absent facts omitted.
nlohmann::json to_json(const HostFacts& facts);

} // namespace lume_unlock::report
