#pragma once

#include "cli/context.hpp"
#include "verify/llama_log.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace lume_unlock::cli {

/// `lume-unlock inspect-log FILE [--expect-shim] [--json]`: classifies llama.cpp's Metal init log
/// (DESIGN §4.6). Exit 0 for every verdict (it is a report), 2 when FILE cannot be read.
void register_inspect_log(CLI::App& app, Context& context, int& exit_code);

/// The human rendering of a report: verdict and reasons first, then every field read.
std::string render_llama_log_report(const verify::LlamaLogReport& report);

} // namespace lume_unlock::cli
