#pragma once

#include "verify/llama_log.hpp"

namespace lume_unlock::verify {

/// Sets report.verdict and report.reasons from the fields read from the log
/// (reference/metal-capabilities.md §4.2): answers no real GPU gives are unsafe first, then the
/// SIMD-group flags (or llama.cpp's own rule from the families) decide fast, partial or stock,
/// and a shim line the answers do not match is called out. Pure: no I/O.
void decide_llama_log_verdict(LlamaLogReport& report,
                              const LlamaLogOptions& options,
                              bool saw_metal_init);

} // namespace lume_unlock::verify
