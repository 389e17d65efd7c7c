#pragma once

#include "apply/enablement_apply.hpp"
#include "enablement/enablement_list.hpp"
#include "guest/session.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"
#include "verify/bench.hpp"
#include "verify/llama_bench.hpp"
#include "verify/llama_log.hpp"

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::apply {

/// The last `count` non-empty lines of `text`, joined with "; " ("it printed nothing on stderr"
/// for none): what a failed run's error quotes.
std::string last_lines(const std::string& text, std::size_t count);

/// Runs `command`, reporting the elapsed seconds to `progress` once a second ("bench", detail
/// "LABEL, 12 s") while the session blocks, and a finished event when it ends.
Result<guest::CommandResult> run_reporting(guest::GuestSession& session,
                                           const std::string& command,
                                           const std::string& label,
                                           const util::ProgressCallback& progress);

/// The error of a run that exited non-zero (nothing for exit 0): when its Metal log is broken, a
/// verdict (verification, exit 6) naming the first failure line; otherwise a guest fault quoting
/// its last stderr lines. Shared by the llama-bench and llama-perplexity runs.
std::optional<Error> failed_run(const std::string& what,
                                const guest::CommandResult& ran,
                                const verify::LlamaLogReport& log,
                                const std::string& entry_name);

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

} // namespace lume_unlock::apply
