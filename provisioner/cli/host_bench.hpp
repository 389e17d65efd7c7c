#pragma once

#include "util/result.hpp"
#include "verify/bench_request.hpp"
#include "verify/llama_bench.hpp"

#include <string>
#include <vector>

namespace lume_unlock::cli {

/// `bench --host-json FILE`: the host's llama-bench JSON, read with the size limit and parsed.
/// Fails (usage) naming the file.
Result<std::vector<verify::LlamaBenchTest>> read_host_bench(const std::string& path);

/// `bench --host-run`: runs `llama-bench` (from PATH) on this Mac with the same arguments as the
/// guest (the model at the same path on the host) and parses its JSON. Anywhere but macOS it
/// fails (usage) saying so and pointing at --host-json.
Result<std::vector<verify::LlamaBenchTest>> run_host_bench(const verify::BenchRequest& request);

} // namespace lume_unlock::cli
