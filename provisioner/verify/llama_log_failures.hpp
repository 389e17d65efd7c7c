#pragma once

#include "verify/llama_log.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::verify {

/// The failure a ggml-metal line reports, from its function ("ggml_metal_synchronize") and the
/// text after "FUNCTION: " (docs/sources.md, ggml-metal's GGML_LOG_ERROR lines). nullopt: the
/// line reports none. Pure.
std::optional<MetalFailureKind> metal_failure_kind(std::string_view function,
                                                   std::string_view body);

/// Whether the failure is written while the process makes its Metal device and library: before
/// that process's capability block, so in a log of restarts it belongs to the run that follows.
bool is_init_failure(std::string_view function, MetalFailureKind kind);

/// The shim failure stated by a shim line: `rest` is the text after the marker, `prefix` the text
/// before it (Cua's NSLog prefix "DATE TIME PROCESS[PID:TID] " names the process). nullopt: the
/// line states none.
std::optional<ShimFailure>
read_shim_failure(ShimKind kind, std::string_view prefix, std::string_view rest);

/// What to change for this failure, or nullopt when the log gives no cure: for a residency set,
/// k_no_residency_fix on the enablement entry that runs `process`.
std::optional<std::string> failure_fix(const MetalFailure& failure,
                                       const std::optional<std::string>& process);

/// One sentence naming the line (number and text), what it means, the process and the fix.
std::string describe_failure(const MetalFailure& failure,
                             const std::optional<std::string>& process);

} // namespace lume_unlock::verify
