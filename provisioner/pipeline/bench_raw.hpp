#pragma once

#include "apply/llama_runs.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// One raw output of a bench, kept on the host so that a report can copy the exact bytes its
/// figures were read from.
struct BenchRawFile {
  std::string name; ///< "stock.json", "unlocked.stderr", "host.json"
  std::string bytes;
};

/// Every name a bench may keep, in the order the record lists them.
inline constexpr const char* k_bench_raw_names[] = {"stock.json",
                                                    "stock.stderr",
                                                    "unlocked.json",
                                                    "unlocked.stderr",
                                                    "host.json",
                                                    "perplexity-stock.stdout",
                                                    "perplexity-stock.stderr",
                                                    "perplexity-unlocked.stdout",
                                                    "perplexity-unlocked.stderr",
                                                    "host-perplexity.txt"};

/// The two guest runs' stdout (llama-bench JSON) and stderr (the Metal log), then the host's
/// JSON when there was one.
std::vector<BenchRawFile> bench_raw_files(const apply::GuestBench& measured,
                                          const std::optional<std::string>& host_json);

/// The two llama-perplexity runs' stdout (the chunk values) and stderr (the Final estimate), then
/// the host's output when there was one.
std::vector<BenchRawFile> perplexity_raw_files(const apply::GuestPerplexity& measured,
                                               const std::optional<std::string>& host_output);

/// The bench record's "raw": {"stock.json": {"sha256": "<hex>", "size": N}, …}.
nlohmann::json bench_raw_record(const std::vector<BenchRawFile>& files);

/// "<state_dir>/vms/<vm>/bench". Fails (usage) for a VM name provenance_path refuses.
Result<std::string> bench_raw_dir(const std::string& state_dir, const std::string& vm);

/// Writes each file atomically into bench_raw_dir (created 0700), then removes the other
/// k_bench_raw_names there (the host.json of an earlier run with a host), so the directory holds
/// exactly the last bench's outputs.
Status write_bench_raw_files(const std::string& state_dir,
                             const std::string& vm,
                             const std::vector<BenchRawFile>& files);

} // namespace lume_unlock::pipeline
