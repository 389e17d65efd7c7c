#include "report/host_facts.hpp"

namespace lume_unlock::report {

std::optional<std::int64_t> gpu_cores_from_system_profiler(std::string_view json_text) {
  const auto doc = nlohmann::json::parse(json_text, nullptr, false);
  if (!doc.is_object() || !doc.contains("SPDisplaysDataType") ||
      !doc["SPDisplaysDataType"].is_array()) {
    return std::nullopt;
  }
  for (const auto& adapter : doc["SPDisplaysDataType"]) {
    if (!adapter.is_object() || !adapter.contains("sppci_cores")) {
      continue;
    }
    const auto& cores = adapter["sppci_cores"];
    if (cores.is_number_integer()) {
      return cores.get<std::int64_t>();
    }
    if (cores.is_string()) {
      const std::string text = cores.get<std::string>();
      if (!text.empty() && text.size() < 7 &&
          text.find_first_not_of("0123456789") == std::string::npos) {
        return std::stoll(text);
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> trimmed_fact(std::string_view output) {
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r' ||
                             output.back() == ' ' || output.back() == '\t')) {
    output.remove_suffix(1);
  }
  if (output.empty()) {
    return std::nullopt;
  }
  return std::string(output);
}

nlohmann::json to_json(const HostFacts& facts) {
  nlohmann::json out = {{"mac", facts.mac}};
  if (facts.macos_version) {
    out["macos_version"] = *facts.macos_version;
  }
  if (facts.macos_build) {
    out["macos_build"] = *facts.macos_build;
  }
  if (facts.chip) {
    out["chip"] = *facts.chip;
  }
  if (facts.gpu_cores) {
    out["gpu_cores"] = *facts.gpu_cores;
  }
  return out;
}

} // namespace lume_unlock::report
