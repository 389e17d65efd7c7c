#pragma once

#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::verify {

/// What llama.cpp's Metal init log says about the fast paths (DESIGN §4.6,
/// reference/metal-capabilities.md §4.2).
enum class LlamaLogVerdict {
  fast,           ///< SIMD-group reduction and matrix multiply on: the unlocked kernels run
  partial,        ///< reduction on, matrix multiply off (Metal3 without Apple7)
  stock,          ///< reduction off: most of the model runs on the CPU
  unsafe_profile, ///< answers no real GPU gives (Apple > 1010, Common > 3003, broad build, Metal on
                  ///< a shimmed VM)
  shim_inactive,  ///< injection was requested (or the shim said it stayed inert, or that its hooks
                  ///< failed to install) but llama.cpp saw stock answers
  no_metal_log,   ///< no Metal init lines at all
  broken,         ///< ggml-metal itself reported a failure: a command buffer, the residency set or
                  ///< the Metal library (whatever the capability lines say)
  shim_enabled,   ///< no Metal init lines, but the shim's success line says its hooks are in place
                  ///< (llama-server's default verbosity hides ggml's capability block)
};

/// The stable name used in JSON and text ("fast", "unsafe-profile", ...).
const char* verdict_name(LlamaLogVerdict verdict);

/// Which shim wrote the activation line.
enum class ShimKind {
  lume_unlock, ///< "[lume-unlock-shim] enabled for …"
  cua,         ///< "[LumeMetalCapabilities] Enabled for … (appleFamilyMax=… …)"
  cua_broad,   ///< the superseded research build: "(familyMax=… featureProfile=… …)"
};

/// The shim's activation line, when there is one.
struct ShimActivation {
  ShimKind kind = ShimKind::lume_unlock;
  std::string process;
  std::size_t line = 0; ///< its number in the file
  std::optional<long long> apple_family_max;
  std::optional<long long> family_max;      ///< broad build only
  std::optional<long long> feature_profile; ///< broad build only
  std::optional<long long> max_threadgroup_memory;
};

/// What ggml-metal reported failing, from its GGML_LOG_ERROR lines (docs/sources.md).
enum class MetalFailureKind {
  command_buffer, ///< "ggml_metal_synchronize: error: command buffer N failed with status S"
  error_state,    ///< "ggml_metal_graph_compute: backend is in error state from a previous …"
  residency_set,  ///< "ggml_metal_buffer_init: error: failed to initialize residency set" (or _map)
  library,  ///< "ggml_metal_library_init: error: …", "…device_init: error: failed to create
            ///< library", "ggml_metal_init: error: failed to initialize the Metal library"
  pipeline, ///< "ggml_metal_library_compile_pipeline: failed to create pipeline state: …"
  command_queue,  ///< "ggml_metal_device_init: error: failed to create command queue"
  buffer,         ///< "…: error: failed to allocate buffer, size = …", "…' buffer is nil"
  unsupported_op, ///< "ggml_metal_op_encode_impl: error: unsupported op '…'"
  abort,          ///< ggml_abort from a ggml-metal file: "…/ggml-metal-ops.cpp:203: …"
};
inline constexpr std::size_t k_metal_failure_kinds =
    static_cast<std::size_t>(MetalFailureKind::abort) + 1;

/// One of ggml-metal's failure lines.
struct MetalFailure {
  MetalFailureKind kind = MetalFailureKind::command_buffer;
  std::size_t line = 0; ///< its number in the file, from 1
  std::string text;     ///< the line as written
  std::optional<std::string>
      detail; ///< the "error: …" line ggml writes after a failed command buffer
};

/// What an enablement entry sets when Metal cannot make a residency set on the device.
inline constexpr const char* k_no_residency_fix = "env: {GGML_METAL_NO_RESIDENCY: \"1\"}";

/// One sentence naming the line (number and text), what it means, the process and, for a
/// residency set, the fix (k_no_residency_fix on the entry that runs `process`).
std::string describe_failure(const MetalFailure& failure,
                             const std::optional<std::string>& process);

/// A shim's own line saying its hooks are not in place: "[lume-unlock-shim] not enabled for P: R",
/// Cua's "Required device methods are unavailable; …" and "Capability hook installation was
/// incomplete".
struct ShimFailure {
  ShimKind kind = ShimKind::lume_unlock;
  std::size_t line = 0;
  std::string text;    ///< the line as written
  std::string process; ///< empty when the line does not name it
  std::string reason;
};

/// Which run of the file the report describes. A keep_alive agent appends every restart to one
/// log: a shim line, or a capability block after one, starts a new run, and only the last counts.
struct LogRun {
  std::size_t first_line = 1;         ///< the line that started it (1: the file's start)
  std::optional<std::string> process; ///< named by the run's shim line
  std::size_t earlier_runs = 0;       ///< runs before it in the file, none of them read
};

/// The most failure lines a report keeps (failure_count counts them all): a failed command
/// buffer makes every later graph print the error-state line.
inline constexpr std::size_t k_max_failures_kept = 8;

/// Everything read from one log, and the verdict. A field is empty when its line was absent.
struct LlamaLogReport {
  LlamaLogVerdict verdict = LlamaLogVerdict::no_metal_log;
  std::optional<std::string> gpu_name; ///< the device name; absent when the log shows only "MTL0"
  std::optional<int> apple_family;     ///< e.g. 1009
  std::optional<int> common_family;    ///< e.g. 3003
  std::optional<int> metal_family;     ///< e.g. 5002; absent on a stock or safely shimmed guest
  std::optional<bool> simdgroup_reduction;
  std::optional<bool> simdgroup_matrix;
  std::optional<bool> bfloat;
  std::optional<bool> tensor;
  std::optional<bool> residency_sets;
  std::optional<ShimActivation> shim;
  std::vector<std::string> inert_messages; ///< shim lines saying it left the device stock
  std::optional<ShimFailure> shim_failure; ///< the shim said its hooks are not in place
  std::vector<MetalFailure> failures;      ///< ggml-metal's failure lines, the first kept
  std::size_t failure_count = 0;           ///< all of them
  LogRun run;                              ///< the run read: the file's last
  std::vector<std::string> reasons;        ///< why the verdict is what it is, one sentence each
};

struct LlamaLogOptions {
  /// The user asked for injection: no shim line plus stock flags is then "shim-inactive".
  bool expect_shim = false;
};

/// The largest llama.cpp log read: a verbose run's stderr is a few MiB.
inline constexpr std::size_t k_max_llama_log_bytes = 64u << 20;

/// The longest Metal init or shim line accepted. llama.cpp's and the shims' lines are under 200
/// characters; a line far longer was not written by them.
inline constexpr std::size_t k_max_metal_line_bytes = 4096;

/// Refuses (usage) a log holding a line that carries a Metal init prefix ("ggml_metal…") or a
/// shim marker and is longer than k_max_metal_line_bytes, naming the line and its length: such a
/// file is not the llama.cpp log the user meant, and a verdict drawn from it would mislead.
Status check_llama_log_lines(std::string_view text);

/// Classifies the last run in the text of a llama.cpp stderr log. Pure: no I/O. Tolerates every log
/// era in metal-capabilities.md §1.5 ("ggml_metal_init:"/"ggml_metal_device_init:", "support"
/// suffixes, "has"/"use residency sets", GPU names with or without "MTL0 (…)", any whitespace,
/// CRLF).
LlamaLogReport classify_llama_log(std::string_view text, const LlamaLogOptions& options = {});

/// The DESIGN §4.6 JSON document: verdict, gpu_name, apple_family, common_family, metal_family,
/// simdgroup_reduction, simdgroup_matrix, bfloat, tensor, residency_sets,
/// shim {present, apple_family_max, max_threadgroup_memory}; absent values are null. Then
/// run {line, process, earlier_runs}, failures [{kind, line, text, detail?, fix?}],
/// failure_count, shim_failure {line, text, process, reason} or null, and reasons.
nlohmann::json to_json(const LlamaLogReport& report);

} // namespace lume_unlock::verify
