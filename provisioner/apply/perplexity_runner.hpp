#pragma once

#include "apply/enablement_apply.hpp"
#include "enablement/enablement_list.hpp"
#include "guest/session.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"
#include "verify/bench.hpp"
#include "verify/llama_log.hpp"
#include "verify/perplexity.hpp"

#include <string>
#include <vector>

namespace lume_unlock::apply {

/// One llama-perplexity run in the guest: what it printed, and the figures read from it.
struct PerplexitySide {
  std::string stdout_text;
  std::string stderr_text;
  verify::PerplexityRun run;
  verify::LlamaLogReport log; ///< its stderr classified: ggml-metal's failure lines make it broken
};

struct GuestPerplexity {
  PerplexitySide stock;    ///< -ngl 0, without the shim (stock_command_line)
  PerplexitySide unlocked; ///< on the GPU, with the entry's agent environment (exec_command_line)
};

/// "-m MODEL -f TEXT -c 512 -b 512 [-t N] -ngl 0|999": the words after the entry's own arguments;
/// the same -c and -b on both sides, the CPU side with -ngl 0, the GPU side with every layer.
std::vector<std::string> llama_perplexity_arguments(const verify::BenchRequest& request,
                                                    const std::string& text_path,
                                                    bool gpu);

/// Puts verify::perplexity_text() at <home>/verify::k_perplexity_text_guest_path, then runs
/// `entry` with llama_perplexity_arguments() twice, stock (-ngl 0) first, then unlocked on the
/// GPU. A run that exits non-zero fails (category guest) with the last lines of its stderr; a run
/// that exits 0 without figures (a text too short, a broken GPU) is a result, judged by
/// verify::gate_perplexity. Progress as run_guest_bench's ("perplexity stock run, 3 s").
Result<GuestPerplexity> run_guest_perplexity(guest::GuestSession& session,
                                             const enablement::EnablementEntry& entry,
                                             const EnablementTarget& target,
                                             const std::string& home,
                                             const verify::BenchRequest& request,
                                             const util::ProgressCallback& progress);

} // namespace lume_unlock::apply
