#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// `lume-unlock bench NAME --model PATH_IN_GUEST [--entry llama-bench] [-p 512] [-n 128] [-r 3]
/// [--host-json FILE | --host-run] [--min-speedup X] [--min-host-ratio pp=R,tg=R] [--json]`:
/// runs the enabled llama-bench entry stock and unlocked in the guest, prints the table,
/// records the figures (pipeline::run_bench) and exits 6 when a threshold or the unlocked
/// run's Metal log fails.
void register_bench(CLI::App& app, Context& context, int& exit_code);

} // namespace lume_unlock::cli
