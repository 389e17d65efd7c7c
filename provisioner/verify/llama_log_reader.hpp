#pragma once

#include "verify/llama_log.hpp"

#include <string_view>

namespace lume_unlock::verify {

/// MTLGPUFamilyMetal3: llama.cpp prints "MTLGPUFamilyMetal3" and the verdict compares codes.
inline constexpr int k_metal3 = 5001;

/// Reads llama.cpp's stderr line by line into `report`'s fields (GPU name, family lines, the
/// simdgroup/bfloat/tensor/residency flags, the shim's activation or inert lines), leaving the
/// verdict and reasons alone. Returns whether any Metal init line was seen. Pure: no I/O.
bool read_llama_log(std::string_view text, LlamaLogReport& report);

} // namespace lume_unlock::verify
