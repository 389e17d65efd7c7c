#include "probe/report.hpp"

#include <nlohmann/json.hpp>

namespace lume_unlock::probe {
namespace {

const char* state_name(ShimState state) {
  switch (state) {
  case ShimState::inert:
    return "inert";
  case ShimState::active:
    return "active";
  case ShimState::absent:
    break;
  }
  return "absent";
}

nlohmann::ordered_json optional_number(const std::optional<std::uint64_t>& value) {
  return value.has_value() ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

/// "inherit" (children keep the injection variable; the guard file decides), "removed" (the shim
/// took itself out of the variable at load), null when the shim is not loaded.
nlohmann::ordered_json children_rule(const std::optional<bool>& inherit) {
  if (!inherit.has_value())
    return nullptr;
  return *inherit ? "inherit" : "removed";
}

const char* yes_no(bool value) {
  return value ? "true" : "false";
}

} // namespace

const std::array<long, 19>& probe_family_codes() {
  // MTLGPUFamily: Apple 1-10, Mac 1-2, Common 1-3, MacCatalyst 1-2, Metal 3-4.
  // clang-format off
  static const std::array<long, 19> codes = {
      1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010,
      2001, 2002, 3001, 3002, 3003, 4001, 4002, 5001, 5002};
  // clang-format on
  return codes;
}

ShimStatus shim_status_from(const lume_unlock_shim_state_v1* state) {
  ShimStatus status;
  if (state == nullptr)
    return status;
  status.reason = state->reason_name != nullptr ? state->reason_name : "unknown";
  if (state->version >= 2)
    status.children_inherit = state->children_inherit != 0;
  if (state->state == LUME_UNLOCK_SHIM_ACTIVE) {
    status.state = ShimState::active;
    status.apple_family_max = state->apple_family_max;
    status.max_threadgroup_memory = state->max_threadgroup_memory;
  } else {
    status.state = ShimState::inert;
  }
  return status;
}

bool family_supported(const Report& report, long code) {
  for (const FamilyAnswer& answer : report.families) {
    if (answer.code == code)
      return answer.supported;
  }
  return false;
}

Derived derive(const Report& report) {
  Derived d;
  const bool apple6 = family_supported(report, 1006);
  const bool apple7 = family_supported(report, 1007);
  const bool metal3 = family_supported(report, 5001);
  d.simdgroup_reduction = apple7 || metal3;
  d.simdgroup_matrix = apple7;
  d.bfloat = metal3 || apple6;
  d.residency_sets = metal3;
  return d;
}

const char* build_arch() {
#if defined(__arm64e__)
  return "arm64e";
#elif defined(__aarch64__) || defined(__arm64__)
  return "arm64";
#elif defined(__x86_64__)
  return "x86_64";
#else
  return "unknown";
#endif
}

std::string render_json(const Report& report) {
  nlohmann::ordered_json doc;
  doc["process"] = report.process;
  doc["arch"] = report.arch;
  doc["shim"] = {{"state", state_name(report.shim.state)},
                 {"reason", report.shim.reason},
                 {"apple_family_max", optional_number(report.shim.apple_family_max)},
                 {"max_threadgroup_memory", optional_number(report.shim.max_threadgroup_memory)},
                 {"children", children_rule(report.shim.children_inherit)}};
  doc["device"] = report.device.has_value() ? nlohmann::ordered_json(*report.device)
                                            : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json families = nlohmann::ordered_json::object();
  for (const FamilyAnswer& answer : report.families) {
    families[std::to_string(answer.code)] = answer.supported;
  }
  doc["families"] = families;
  doc["max_threadgroup_memory"] = report.max_threadgroup_memory;
  doc["recommended_max_working_set_size"] = report.recommended_max_working_set_size;
  const Derived d = derive(report);
  doc["llama_cpp"] = {{"simdgroup_reduction", d.simdgroup_reduction},
                      {"simdgroup_matrix", d.simdgroup_matrix},
                      {"bfloat", d.bfloat}};
  doc["mlx"] = {{"residency_sets", d.residency_sets}};
  return doc.dump() + "\n";
}

std::string render_text(const Report& report) {
  std::string out;
  out += "process: " + report.process + "\n";
  out += "arch: " + report.arch + "\n";
  out += std::string("shim: ") + state_name(report.shim.state);
  if (report.shim.state == ShimState::active) {
    out +=
        " (appleFamilyMax=" + std::to_string(report.shim.apple_family_max.value_or(0)) +
        " maxThreadgroupMemory=" + std::to_string(report.shim.max_threadgroup_memory.value_or(0)) +
        ")";
  } else {
    out += " (" + report.shim.reason + ")";
  }
  if (report.shim.children_inherit.has_value())
    out += *report.shim.children_inherit ? "; children inherit it" : "; children start without it";
  out += "\n";
  out += "device: " + report.device.value_or("(none)") + "\n";
  for (const FamilyAnswer& answer : report.families) {
    out += "supportsFamily " + std::to_string(answer.code) + ": " + yes_no(answer.supported) + "\n";
  }
  out += "maxThreadgroupMemoryLength: " + std::to_string(report.max_threadgroup_memory) + "\n";
  const std::uint64_t ws = report.recommended_max_working_set_size;
  // Same "X MB" (bytes / 10^6, two decimals) as llama.cpp's recommendedMaxWorkingSetSize line.
  const std::uint64_t hundredths = (ws % 1000000) / 10000;
  out += "recommendedMaxWorkingSetSize: " + std::to_string(ws) + " (" +
         std::to_string(ws / 1000000) + "." + (hundredths < 10 ? "0" : "") +
         std::to_string(hundredths) + " MB)\n";
  const Derived d = derive(report);
  out += std::string("llama.cpp: simdgroup_reduction=") + yes_no(d.simdgroup_reduction) +
         " simdgroup_matrix=" + yes_no(d.simdgroup_matrix) + " bfloat=" + yes_no(d.bfloat) + "\n";
  out += std::string("mlx: residency_sets=") + yes_no(d.residency_sets) + "\n";
  return out;
}

} // namespace lume_unlock::probe
