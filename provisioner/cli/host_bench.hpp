#pragma once

#include "util/result.hpp"
#include "verify/bench.hpp"

#include <string>
#include <vector>

namespace lume_unlock::cli {

/// The host's llama-bench run: the JSON exactly as read (the report copies it) and its tests.
struct HostBench {
  std::string json;
  std::vector<verify::LlamaBenchTest> tests;
};

/// `bench --host-json FILE`: the host's llama-bench JSON, read with the size limit and parsed.
/// Fails (usage) naming the file.
Result<HostBench> read_host_bench(const std::string& path);

/// The host's llama-perplexity run on the shipped text: its output as read, and its figures.
struct HostPerplexity {
  std::string output;
  verify::PerplexityRun run;
};

/// `bench --host-perplexity FILE`: llama-perplexity's stdout and stderr saved together (2>&1),
/// read with a size limit. Fails (usage) naming the file when it cannot be read or has no
/// 'Final estimate' line, with the command that makes one in the hint.
Result<HostPerplexity> read_host_perplexity(const std::string& path);

/// `bench --host-run`: runs `llama-bench` (from PATH) on this Mac with the same arguments as the
/// guest (the model at the same path on the host) and parses its JSON. Anywhere but macOS it
/// fails (usage) saying so and pointing at --host-json.
Result<HostBench> run_host_bench(const verify::BenchRequest& request);

} // namespace lume_unlock::cli
