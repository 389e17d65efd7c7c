#include "util/text.hpp"
#include "verify/llama_log_parts.hpp"

namespace lume_unlock::verify {

namespace {

using util::starts_with;
using util::trim;

/// "2026-09-14 09:03:11.482 llama-bench[4121:80231] " → "llama-bench"; "" when not that shape.
std::string nslog_process(std::string_view prefix) {
  const std::string text = trim(prefix);
  const auto first_space = text.find(' ');
  const auto second_space =
      first_space == std::string::npos ? std::string::npos : text.find(' ', first_space + 1);
  const auto bracket = text.rfind('[');
  if (second_space == std::string::npos || bracket == std::string::npos ||
      bracket <= second_space || text.back() != ']') {
    return {};
  }
  return text.substr(second_space + 1, bracket - second_space - 1);
}

std::string process_words(const std::optional<std::string>& process) {
  return process && !process->empty() ? " in " + *process : "";
}

} // namespace

const char* failure_kind_name(MetalFailureKind kind) {
  switch (kind) {
  case MetalFailureKind::command_buffer:
    return "command-buffer";
  case MetalFailureKind::error_state:
    return "error-state";
  case MetalFailureKind::residency_set:
    return "residency-set";
  case MetalFailureKind::library:
    return "library";
  }
  return "library";
}

std::optional<MetalFailureKind> metal_failure_kind(std::string_view function,
                                                   std::string_view body) {
  // ggml-metal-context.m: ggml_metal_synchronize (and graph_compute's capture-only INFO line
  // without "error: "), ggml_metal_graph_compute, ggml_metal_init.
  if ((starts_with(body, "error: command buffer ") || starts_with(body, "command buffer ")) &&
      body.find(" failed with status ") != std::string_view::npos) {
    return MetalFailureKind::command_buffer;
  }
  if (starts_with(body, "backend is in error state from a previous command buffer failure")) {
    return MetalFailureKind::error_state;
  }
  // ggml-metal-device.m: ggml_metal_buffer_init and ggml_metal_buffer_map.
  if (starts_with(body, "error: failed to initialize residency set")) {
    return MetalFailureKind::residency_set;
  }
  if ((function == "ggml_metal_library_init" && starts_with(body, "error: ")) ||
      (function == "ggml_metal_device_init" &&
       starts_with(body, "error: failed to create library")) ||
      (function == "ggml_metal_init" &&
       starts_with(body, "error: failed to initialize the Metal library"))) {
    return MetalFailureKind::library;
  }
  return std::nullopt;
}

bool is_init_failure(std::string_view function, MetalFailureKind kind) {
  // ggml_metal_init's library failure comes from a context made after the block was printed.
  return kind == MetalFailureKind::library && function != "ggml_metal_init";
}

std::optional<ShimFailure>
read_shim_failure(ShimKind kind, std::string_view prefix, std::string_view rest) {
  ShimFailure failure;
  failure.kind = kind;
  const std::string text = trim(rest);
  if (kind == ShimKind::lume_unlock) {
    // "[lume-unlock-shim] not enabled for PROCESS: REASON", written when hook installation fails.
    const std::string_view lead = "not enabled for ";
    if (!starts_with(text, lead)) {
      return std::nullopt;
    }
    const std::string named = text.substr(lead.size());
    const auto colon = named.find(": ");
    failure.process = trim(named.substr(0, colon));
    failure.reason = colon == std::string::npos ? std::string() : trim(named.substr(colon + 2));
    return failure;
  }
  // Cua's NSLog lines (LumeMetalCapabilities.m, installDeviceHooks).
  if (!starts_with(text, "Required device methods are unavailable") &&
      !starts_with(text, "Capability hook installation was incomplete")) {
    return std::nullopt;
  }
  failure.process = nslog_process(prefix);
  failure.reason = text;
  return failure;
}

std::optional<std::string> failure_fix(const MetalFailure& failure,
                                       const std::optional<std::string>& process) {
  if (failure.kind != MetalFailureKind::residency_set) {
    return std::nullopt;
  }
  return std::string(k_no_residency_fix) + " on the enablement entry that runs " +
         (process && !process->empty() ? *process : std::string("this program"));
}

std::string describe_failure(const MetalFailure& failure,
                             const std::optional<std::string>& process) {
  std::string meaning;
  switch (failure.kind) {
  case MetalFailureKind::command_buffer:
    meaning = "a Metal command buffer failed on the GPU: its results are lost";
    break;
  case MetalFailureKind::error_state:
    meaning = "the Metal backend refuses work after an earlier command buffer failed";
    break;
  case MetalFailureKind::residency_set:
    meaning = "Metal could not make a residency set on this device";
    break;
  case MetalFailureKind::library:
    meaning = "Metal could not make ggml's kernel library (with the embedded library: the "
              "device's compiler rejected ggml's kernels)";
    break;
  }
  std::string text = "line " + std::to_string(failure.line) + " '" + failure.text + "'" +
                     process_words(process) + ": " + meaning;
  if (failure.detail) {
    text += " ('" + *failure.detail + "')";
  }
  if (auto fix = failure_fix(failure, process)) {
    text += "; set " + *fix;
  }
  return text;
}

} // namespace lume_unlock::verify
