#include "verify/llama_log.hpp"

#include "util/text.hpp"
#include "verify/llama_log_parts.hpp"

#include <cctype>
#include <iterator>
#include <string>
#include <vector>

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

const char* failure_kind_name(MetalFailureKind kind) {
  static const char* const names[] = {"command-buffer",
                                      "error-state",
                                      "residency-set",
                                      "library",
                                      "pipeline",
                                      "command-queue",
                                      "buffer",
                                      "unsupported-op",
                                      "abort"};
  static_assert(std::size(names) == k_metal_failure_kinds, "one name per kind");
  return names[static_cast<int>(kind)];
}

std::optional<std::string> failure_fix(const MetalFailure& failure,
                                       const std::optional<std::string>& process) {
  if (failure.kind != MetalFailureKind::residency_set) {
    return std::nullopt;
  }
  return std::string(k_no_residency_fix) + " on the enablement entry that runs " +
         (process && !process->empty() ? *process : std::string("this program"));
}

} // namespace

std::optional<MetalFailureKind> metal_failure_kind(std::string_view function,
                                                   std::string_view body) {
  const auto has = [&body](std::string_view words) {
    return body.find(words) != std::string_view::npos;
  };
  // The one WARN that says "error:" (ggml_metal_library_init, before the refactor
  // ggml_metal_load_library) falls back to the current folder and goes on.
  if (starts_with(body, "error: could not use bundle path")) {
    return std::nullopt;
  }
  // ggml-metal-context.m: ggml_metal_synchronize (and graph_compute's INFO line without
  // "error: "), ggml_metal_graph_compute. Before the 2025-09 refactor (ggml-metal.m):
  // ggml_backend_metal_synchronize, with the same words.
  if ((starts_with(body, "error: command buffer ") || starts_with(body, "command buffer ")) &&
      has(" failed with status ")) {
    return MetalFailureKind::command_buffer;
  }
  if (starts_with(body, "backend is in error state from a previous command buffer failure")) {
    return MetalFailureKind::error_state;
  }
  // ggml-metal-device.m: ggml_metal_buffer_init and ggml_metal_buffer_map; before the refactor,
  // ggml_backend_metal_buffer_type_alloc_buffer and ggml_backend_metal_device_buffer_mapped.
  if (starts_with(body, "error: failed to initialize residency set")) {
    return MetalFailureKind::residency_set;
  }
  // A kernel not built (not the tensor API's dummy_kernel probe, which only turns that API off);
  // before the refactor ggml_metal_init's kernel table and ggml_metal_compile_kernel.
  if ((function == "ggml_metal_library_compile_pipeline" &&
       (starts_with(body, "failed to compile pipeline: ") ||
        starts_with(body, "failed to create pipeline state: ") ||
        starts_with(body, "incompatible pipeline ")) &&
       !has("base = 'dummy_kernel'")) ||
      starts_with(body, "error: load pipeline error: ") ||
      (function == "ggml_metal_compile_kernel" && starts_with(body, "error: "))) {
    return MetalFailureKind::pipeline;
  }
  if (starts_with(body, "error: failed to create command queue")) {
    return MetalFailureKind::command_queue; // the context is not made: no GPU
  }
  if (starts_with(body, "error: failed to allocate buffer, size = ") ||
      (starts_with(body, "error: tensor '") && has("' buffer is nil"))) {
    return MetalFailureKind::buffer;
  }
  // ggml-metal-ops.cpp (before the refactor ggml_metal_encode_node, once as a WARN), then abort.
  if (starts_with(body, "error: unsupported op '") ||
      ((starts_with(body, "error: node ") || starts_with(body, "node ")) &&
       has(" not implemented"))) {
    return MetalFailureKind::unsupported_op;
  }
  // The library (ggml_metal_init: today "failed to initialize the Metal library", before the
  // refactor "metal library is nil", before ggml 1d6388c1 the NSError itself).
  if (((function == "ggml_metal_library_init" || function == "ggml_metal_load_library" ||
        function == "ggml_metal_init") &&
       starts_with(body, "error: ")) ||
      (function == "ggml_metal_device_init" &&
       starts_with(body, "error: failed to create library"))) {
    return MetalFailureKind::library;
  }
  return std::nullopt;
}

std::optional<MetalFailureKind> metal_abort_kind(std::string_view line) {
  // ggml_abort (ggml.c): "FILE:LINE: message" on stderr, FILE a ggml-metal source file.
  for (auto at = line.find("ggml-metal"); at != std::string_view::npos;
       at = line.find("ggml-metal", at + 1)) {
    std::size_t end = at;
    while (end < line.size() && (std::isalnum(static_cast<unsigned char>(line[end])) ||
                                 line[end] == '-' || line[end] == '_' || line[end] == '.')) {
      ++end;
    }
    std::size_t digits = end + 1;
    while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) {
      ++digits;
    }
    if (end < line.size() && line[end] == ':' && digits > end + 1 &&
        line.compare(digits, 2, ": ") == 0) {
      return MetalFailureKind::abort;
    }
  }
  return std::nullopt;
}

bool is_init_failure(std::string_view function, std::string_view body, MetalFailureKind kind) {
  // Today's ggml_metal_init failure comes from a context made after the block was printed; the
  // old ones ("metal library is nil", the NSError before ggml 1d6388c1) from the init that would
  // have printed it.
  // The device's command queue is made before the device prints its block.
  if (kind == MetalFailureKind::command_queue) {
    return function == "ggml_metal_device_init";
  }
  return kind == MetalFailureKind::library &&
         !(function == "ggml_metal_init" &&
           starts_with(body, "error: failed to initialize the Metal library"));
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

std::string describe_failure(const MetalFailure& failure,
                             const std::optional<std::string>& process) {
  static const char* const meanings[] = {
      "a Metal command buffer failed on the GPU: its results are lost",
      "the Metal backend refuses work after an earlier command buffer failed",
      "Metal could not make a residency set on this device",
      "Metal could not make ggml's kernel library (with the embedded library: the device's "
      "compiler rejected ggml's kernels)",
      "Metal could not build one of ggml's kernels: the op that needs it cannot run on the GPU",
      "Metal gave no command queue: the backend was not made and nothing ran on the GPU",
      "a Metal buffer could not be allocated or found: the tensors in it are not on the GPU",
      "the Metal backend has no kernel for an op of this model and aborted",
      "the Metal backend aborted the program"};
  static_assert(std::size(meanings) == k_metal_failure_kinds, "one meaning per kind");
  const std::string meaning = meanings[static_cast<int>(failure.kind)];
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

const char* verdict_name(LlamaLogVerdict verdict) {
  static const char* const names[] = {"fast",
                                      "partial",
                                      "stock",
                                      "unsafe-profile",
                                      "shim-inactive",
                                      "no-metal-log",
                                      "broken",
                                      "shim-enabled"};
  return names[static_cast<int>(verdict)];
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

namespace {

// Codes llama.cpp prints that no SDK defines (reference/metal-capabilities.md §4.2 rule 3).
constexpr int k_highest_real_apple = 1010;
constexpr int k_highest_real_common = 3003;
constexpr int k_apple7 = 1007;
constexpr const char* k_paravirtual = "Apple Paravirtual device";
constexpr const char* k_broad_reason =
    "the shim line is the superseded broad research build (familyMax/featureProfile)";

std::string family_text(const char* kind, int code) {
  return std::string(kind) + " family " + std::to_string(code);
}

/// Why the answers are ones no real GPU gives (empty: none is).
std::vector<std::string>
unsafe_reasons(const LlamaLogReport& r, bool broad_shim, bool paravirtual) {
  std::vector<std::string> unsafe;
  if (r.apple_family && *r.apple_family > k_highest_real_apple) {
    unsafe.push_back(family_text("Apple", *r.apple_family) + " is above " +
                     std::to_string(k_highest_real_apple) +
                     ", which no Apple GPU reports: a blanket-true family hook");
  }
  if (r.common_family && *r.common_family > k_highest_real_common) {
    unsafe.push_back(family_text("Common", *r.common_family) + " is above " +
                     std::to_string(k_highest_real_common) +
                     ", which no SDK defines: a blanket-true family hook");
  }
  if (broad_shim) {
    unsafe.push_back(k_broad_reason);
  }
  if (r.metal_family && r.shim && (paravirtual || !r.gpu_name)) {
    unsafe.push_back(
        family_text("Metal", *r.metal_family) +
        " is reported on a shimmed virtual device: MLX would then use residency sets and fail");
  }
  return unsafe;
}

/// SIMD-group reduction is off: stock, or shim-inactive when injection was evident.
void decide_without_reduction(LlamaLogReport& r, const LlamaLogOptions& options) {
  auto& reasons = r.reasons;
  const bool injection_evident = options.expect_shim || !r.inert_messages.empty();
  if (!r.shim && injection_evident) {
    r.verdict = LlamaLogVerdict::shim_inactive;
    reasons.push_back(
        "injection was requested but no shim activation line appears and llama.cpp saw the "
        "stock answers (check LUME_METAL_APPLE_FAMILY_MAX, the guard file, and whether the "
        "binary strips DYLD_ variables)");
    for (const auto& message : r.inert_messages) {
      reasons.push_back("the shim said: " + message);
    }
    return;
  }
  r.verdict = LlamaLogVerdict::stock;
  reasons.push_back(
      "SIMD-group reduction is off: llama.cpp runs matrix multiplication and normalisation on "
      "the CPU");
  if (r.shim) {
    reasons.push_back("a shim activation line is present, yet llama.cpp saw the stock answers");
  }
}

/// The fast paths run: says whether the shim line accounts for them.
void attribute_fast(LlamaLogReport& r, bool paravirtual) {
  auto& reasons = r.reasons;
  if (r.shim) {
    if (r.shim->apple_family_max && r.apple_family &&
        *r.shim->apple_family_max == *r.apple_family && paravirtual) {
      reasons.push_back("attributable to the shim: the Apple family equals appleFamilyMax on the "
                        "paravirtual device");
    } else {
      reasons.push_back(
          "the shim line is present but the Apple family does not match its appleFamilyMax on a "
          "paravirtual device: attribution is uncertain");
    }
  } else if (paravirtual) {
    reasons.push_back(
        "fast paths on a paravirtual device without a shim line: another interposer is present, or "
        "macOS reports more natively");
  }
}

/// ggml-metal reported failures in this run: broken, naming each line kept.
void decide_broken(LlamaLogReport& r) {
  r.verdict = LlamaLogVerdict::broken;
  r.reasons.push_back("ggml-metal reported " + std::to_string(r.failure_count) + " failure line" +
                      (r.failure_count == 1 ? "" : "s") +
                      ": what the GPU computed cannot be trusted, however fast it ran");
  for (const MetalFailure& failure : r.failures) {
    r.reasons.push_back(describe_failure(failure, r.run.process));
  }
  if (r.failure_count > r.failures.size()) {
    r.reasons.push_back("and " + std::to_string(r.failure_count - r.failures.size()) +
                        " more failure lines");
  }
}

/// The shim said its hooks are not in place.
void decide_shim_failure(LlamaLogReport& r) {
  const ShimFailure& failure = *r.shim_failure;
  r.verdict = LlamaLogVerdict::shim_inactive;
  r.reasons.push_back("line " + std::to_string(failure.line) + " '" + failure.text +
                      "': the shim says its hooks " + "are not in place" +
                      (failure.process.empty() ? "" : " in " + failure.process) +
                      (failure.reason.empty() ? "" : " (" + failure.reason + ")") +
                      ", so llama.cpp saw the stock device");
}

/// No capability block, but the shim's success line: its hooks are in place.
void decide_shim_enabled(LlamaLogReport& r) {
  r.verdict = LlamaLogVerdict::shim_enabled;
  r.reasons.push_back(
      "line " + std::to_string(r.shim->line) + ": the shim reports its hooks in place in " +
      (r.shim->process.empty() ? std::string("this process") : r.shim->process) +
      ", but llama.cpp's verbosity hid ggml's capability block (llama-server prints it at no log "
      "level since llama.cpp PR #23021); 'lume-unlock bench' runs llama-bench, which prints it");
}

/// Which run was read, when the file holds more than one.
void describe_run(LlamaLogReport& r) {
  if (r.run.earlier_runs == 0) {
    return;
  }
  r.reasons.push_back(
      "read the last run in the file, from line " + std::to_string(r.run.first_line) +
      (r.run.process ? " (" + *r.run.process + ")" : std::string()) + "; " +
      std::to_string(r.run.earlier_runs) + " earlier run" + (r.run.earlier_runs == 1 ? "" : "s") +
      " (restarts appended to the same log) not read");
}

/// The verdict of the run read (reference/metal-capabilities.md §4.2 for the capability part).
void decide_for_run(LlamaLogReport& r, const LlamaLogOptions& options, bool saw_metal_init) {
  auto& reasons = r.reasons;
  if (r.failure_count > 0) {
    decide_broken(r);
    return;
  }
  if (r.shim_failure) {
    decide_shim_failure(r);
    return;
  }
  const bool broad_shim = r.shim && r.shim->kind == ShimKind::cua_broad;
  if (!saw_metal_init && broad_shim) {
    // The broad build is unsafe whatever the process is: MLX logs no Metal init lines, only its
    // residency-set failure.
    r.verdict = LlamaLogVerdict::unsafe_profile;
    reasons.push_back(k_broad_reason);
    return;
  }
  if (!saw_metal_init && r.shim) {
    decide_shim_enabled(r);
    return;
  }
  if (!saw_metal_init) {
    r.verdict = LlamaLogVerdict::no_metal_log;
    reasons.push_back("the log has no llama.cpp Metal init lines (ggml_metal_…: GPU name, GPU "
                      "family, simdgroup …)");
    return;
  }
  const bool paravirtual = r.gpu_name && r.gpu_name->find(k_paravirtual) != std::string::npos;
  // When a flag line is missing, llama.cpp's own rule gives it from the family lines.
  const bool reduction = r.simdgroup_reduction.value_or(r.apple_family.value_or(0) >= k_apple7 ||
                                                        r.metal_family.value_or(0) >= k_metal3);
  const bool matrix = r.simdgroup_matrix.value_or(r.apple_family.value_or(0) >= k_apple7);

  const std::vector<std::string> unsafe = unsafe_reasons(r, broad_shim, paravirtual);
  if (!unsafe.empty()) {
    r.verdict = LlamaLogVerdict::unsafe_profile;
    reasons.insert(reasons.end(), unsafe.begin(), unsafe.end());
    return;
  }

  if (!reduction) {
    decide_without_reduction(r, options);
    return;
  }
  if (!matrix) {
    r.verdict = LlamaLogVerdict::partial;
    reasons.push_back(
        "SIMD-group reduction is on but matrix multiply is off (Metal3 without Apple7): no "
        "matrix-matrix kernels and no flash attention");
    return;
  }
  r.verdict = LlamaLogVerdict::fast;
  reasons.push_back(
      "SIMD-group reduction and matrix multiply are on: llama.cpp's fast Metal paths run");
  attribute_fast(r, paravirtual);
}

} // namespace

LlamaLogReport classify_llama_log(std::string_view text, const LlamaLogOptions& options) {
  LlamaLogReport report;
  decide_for_run(report, options, read_llama_log(text, report));
  describe_run(report);
  return report;
}

} // namespace lume_unlock::verify
