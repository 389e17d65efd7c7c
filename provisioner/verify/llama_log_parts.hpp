#pragma once

#include "verify/llama_log.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::verify {

/// The failure a ggml-metal line reports, from its function ("ggml_metal_synchronize", or in builds
/// before ggml's 2025-09 Metal refactor "ggml_backend_metal_synchronize") and the
/// text after "FUNCTION: " (docs/sources.md, ggml-metal's GGML_LOG_ERROR lines). nullopt: the
/// line reports none. Pure.
std::optional<MetalFailureKind> metal_failure_kind(std::string_view function,
                                                   std::string_view body);

/// The abort a line reports: ggml_abort's "FILE:LINE: message" where FILE is a ggml-metal source
/// file (GGML_ABORT and GGML_ASSERT in the Metal backend). Pure.
std::optional<MetalFailureKind> metal_abort_kind(std::string_view line);

/// Whether the failure is written while the process makes its Metal device and library: before
/// that process's capability block, so in a log of restarts it belongs to the run that follows.
bool is_init_failure(std::string_view function, std::string_view body, MetalFailureKind kind);

/// The shim failure stated by a shim line: `rest` is the text after the marker, `prefix` the text
/// before it (Cua's NSLog prefix "DATE TIME PROCESS[PID:TID] " names the process). nullopt: the
/// line states none.
std::optional<ShimFailure>
read_shim_failure(ShimKind kind, std::string_view prefix, std::string_view rest);

/// MTLGPUFamilyMetal3: llama.cpp prints "MTLGPUFamilyMetal3" and the verdict compares codes.
inline constexpr int k_metal3 = 5001;

/// Reads llama.cpp's stderr line by line into `report`'s fields (GPU name, family lines, the
/// simdgroup/bfloat/tensor/residency flags, the shim's activation, inert or failure lines,
/// ggml-metal's failure lines), leaving the verdict and reasons alone. Only the file's last run
/// is kept (report.run says which and how many came before): a shim line starts a run, and so
/// does a capability field seen twice or a library failure after a capability block (a process
/// that restarted without a shim line). Returns whether that run has a Metal init line. Pure.
bool read_llama_log(std::string_view text, LlamaLogReport& report);

} // namespace lume_unlock::verify
