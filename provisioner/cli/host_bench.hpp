#pragma once

#include "pipeline/bench.hpp"

#include <string>

// The host's figures a bench compares the guest with, read into pipeline::BenchOptions. Each
// throws Error (usage) as `what` (the flag or recipe field that named the file), with the
// command that makes such a file in the hint, before any guest run.
namespace lume_unlock::cli {

/// The host's `llama-bench -o json` output at `path` (`bench --host-json`, a recipe's
/// bench.host_json), read with the size limit and parsed: `bench.host`, `host_json` (exactly as
/// read, the report copies it) and `host_source` (`source`).
void read_host_bench(pipeline::BenchOptions& bench,
                     const std::string& path,
                     const std::string& what,
                     const std::string& source);

/// The host's llama-perplexity stdout and stderr on the shipped text, saved together (2>&1), at
/// `path`: `bench.host_perplexity` and its output. A file with no 'Final estimate' line fails.
void read_host_perplexity(pipeline::BenchOptions& bench,
                          const std::string& path,
                          const std::string& what);

/// `bench --host-run`: runs `llama-bench` (from PATH) on this Mac with the guest's arguments
/// (the model at the same path on the host) into `bench` as read_host_bench does. Anywhere but
/// macOS it fails saying so and pointing at --host-json.
void run_host_bench(pipeline::BenchOptions& bench);

/// "unlocked run's Metal log: V (stock run: V)" and the note on llama-bench's -v, two lines.
std::string bench_log_lines(const pipeline::BenchOutcome& outcome);

} // namespace lume_unlock::cli
