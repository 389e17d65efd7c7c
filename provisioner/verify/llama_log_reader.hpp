#pragma once

#include "verify/llama_log.hpp"

#include <string_view>

namespace lume_unlock::verify {

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
