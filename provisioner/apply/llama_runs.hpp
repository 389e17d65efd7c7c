#pragma once

#include "apply/enablement_apply.hpp"
#include "enablement/enablement_list.hpp"
#include "guest/session.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"
#include "verify/bench.hpp"
#include "verify/llama_log.hpp"

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::apply {

/// The remote command line that runs `entry` once as its agent would: from `/` (launchd's
/// working directory), with exactly the agent's environment on top of the session's
/// (agent_environment: injection variable, profile, guard file, entry env), the program, its
/// args, then `extra_args`. Every value is quoted with shell_quote; keys are validated names.
Result<std::string> exec_command_line(const enablement::EnablementEntry& entry,
                                      const EnablementTarget& target,
                                      const std::vector<std::string>& extra_args);

/// The same command line without the shim: from `/`, the injection variable unset (`env -u`),
/// only the entry's own env on top of the session's, then the program, its args and
/// `extra_args`. What `bench` runs as the stock side of its comparison. Fails like
/// exec_command_line for an entry whose env clashes with lume-unlock's.
Result<std::string> stock_command_line(const enablement::EnablementEntry& entry,
                                       const EnablementTarget& target,
                                       const std::vector<std::string>& extra_args);

/// "-m MODEL -p 512 -n 128 -r 3 -o json": the words appended to the entry's own arguments.
std::vector<std::string> llama_bench_arguments(const verify::BenchRequest& request);

/// Both guest runs add llama-bench's -v: without it llama-bench hands ggml a null logger right
/// after loading its backends, so Metal's later failure lines (a failed command buffer, a
/// residency set it could not make) never reach stderr (docs/sources.md, llama-bench.cpp).
inline constexpr const char* k_llama_bench_verbose = "-v";
/// What the output of a bench says about it.
inline constexpr const char* k_llama_bench_verbose_note =
    "llama-bench ran with -v: without it, it sends ggml's later messages (Metal's failure lines "
    "among them) to a null logger";

/// One llama-bench run in the guest: its parsed tests and its Metal log, classified.
struct BenchSide {
  std::vector<verify::LlamaBenchTest> tests;
  std::string stdout_text; ///< the JSON exactly as printed: the report copies it
  std::string stderr_text;
  verify::LlamaLogReport log;
};

struct GuestBench {
  BenchSide stock;    ///< without the shim (stock_command_line)
  BenchSide unlocked; ///< with exactly the entry's agent environment (exec_command_line)
};

/// Runs `entry` with llama_bench_arguments() and k_llama_bench_verbose twice in the guest, stock
/// first, then unlocked, each with one command, after one check that the model file is readable
/// (category usage naming the path when not). Each run's stdout is parsed as llama-bench JSON;
/// its stderr is classified (the unlocked side with expect_shim). A run that exits non-zero
/// fails: category verification naming Metal's failure line when its log is broken, else
/// category guest with the last lines of its stderr. While a run lasts, `progress` gets an
/// event a second ("bench", detail "stock run, 12 s"), and a finished one when it ends.
Result<GuestBench> run_guest_bench(guest::GuestSession& session,
                                   const enablement::EnablementEntry& entry,
                                   const EnablementTarget& target,
                                   const verify::BenchRequest& request,
                                   const util::ProgressCallback& progress);

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

/// Puts verify::perplexity_text() at <home>/verify::k_perplexity_text_guest_path, then runs
/// `entry` twice with "-m MODEL -f TEXT -c 512 -b 512 [-t N]" (the same -c and -b on both
/// sides), stock (-ngl 0) first, then unlocked on the
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
