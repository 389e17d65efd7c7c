#include "llama_log.hpp"

#include "llama_log_failures.hpp"
#include "llama_log_reader.hpp"
#include "llama_log_verdict.hpp"

#include <string>

namespace lume_unlock::verify {

const char* verdict_name(LlamaLogVerdict verdict) {
  switch (verdict) {
  case LlamaLogVerdict::fast:
    return "fast";
  case LlamaLogVerdict::partial:
    return "partial";
  case LlamaLogVerdict::stock:
    return "stock";
  case LlamaLogVerdict::unsafe_profile:
    return "unsafe-profile";
  case LlamaLogVerdict::shim_inactive:
    return "shim-inactive";
  case LlamaLogVerdict::no_metal_log:
    return "no-metal-log";
  case LlamaLogVerdict::broken:
    return "broken";
  case LlamaLogVerdict::shim_enabled:
    return "shim-enabled";
  }
  return "no-metal-log";
}

Status check_llama_log_lines(std::string_view text) {
  std::size_t number = 1;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    if (line.size() > k_max_metal_line_bytes &&
        (line.find("ggml_metal") != std::string_view::npos ||
         line.find("[lume-unlock-shim]") != std::string_view::npos ||
         line.find("[LumeMetalCapabilities]") != std::string_view::npos)) {
      return Error(ErrorCategory::usage,
                   "cannot classify the log",
                   "line " + std::to_string(number) + " is a Metal init or shim line of " +
                       std::to_string(line.size()) + " characters, more than the " +
                       std::to_string(k_max_metal_line_bytes) +
                       " that llama.cpp or a shim ever writes",
                   "pass llama.cpp's own stderr, unedited (2> llama.stderr)");
    }
    if (newline == std::string_view::npos) {
      break;
    }
    text.remove_prefix(newline + 1);
    ++number;
  }
  return ok_status();
}

LlamaLogReport classify_llama_log(std::string_view text, const LlamaLogOptions& options) {
  LlamaLogReport report;
  const bool saw_metal_init = read_llama_log(text, report);
  decide_llama_log_verdict(report, options, saw_metal_init);
  return report;
}

nlohmann::json to_json(const LlamaLogReport& report) {
  auto optional = [](const auto& value) -> nlohmann::json {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  nlohmann::json shim = {{"present", report.shim.has_value()},
                         {"apple_family_max", nullptr},
                         {"max_threadgroup_memory", nullptr}};
  if (report.shim) {
    shim["apple_family_max"] = optional(report.shim->apple_family_max);
    shim["max_threadgroup_memory"] = optional(report.shim->max_threadgroup_memory);
  }
  nlohmann::json failures = nlohmann::json::array();
  for (const MetalFailure& failure : report.failures) {
    nlohmann::json item = {
        {"kind", failure_kind_name(failure.kind)}, {"line", failure.line}, {"text", failure.text}};
    if (failure.detail) {
      item["detail"] = *failure.detail;
    }
    if (auto fix = failure_fix(failure, report.run.process)) {
      item["fix"] = *fix;
    }
    failures.push_back(std::move(item));
  }
  nlohmann::json shim_failure = nullptr;
  if (report.shim_failure) {
    const ShimFailure& f = *report.shim_failure;
    shim_failure = {
        {"line", f.line},
        {"text", f.text},
        {"process", f.process.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.process)},
        {"reason", f.reason}};
  }
  return {{"verdict", verdict_name(report.verdict)},
          {"gpu_name", optional(report.gpu_name)},
          {"apple_family", optional(report.apple_family)},
          {"common_family", optional(report.common_family)},
          {"metal_family", optional(report.metal_family)},
          {"simdgroup_reduction", optional(report.simdgroup_reduction)},
          {"simdgroup_matrix", optional(report.simdgroup_matrix)},
          {"bfloat", optional(report.bfloat)},
          {"tensor", optional(report.tensor)},
          {"residency_sets", optional(report.residency_sets)},
          {"shim", shim},
          {"run",
           {{"line", report.run.first_line},
            {"process", optional(report.run.process)},
            {"earlier_runs", report.run.earlier_runs}}},
          {"failures", failures},
          {"failure_count", report.failure_count},
          {"shim_failure", shim_failure},
          {"reasons", report.reasons}};
}

} // namespace lume_unlock::verify
