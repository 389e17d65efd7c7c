#pragma once

#include "apply/llama_runs.hpp"
#include "guest/session.hpp"
#include "oci/manifest.hpp"
#include "recipe/recipe.hpp"
#include "util/progress.hpp"
#include "util/result.hpp"
#include "verify/bench.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// What `lume-unlock bench` measures and against what it is gated.
struct BenchOptions {
  std::string vm;
  std::string entry = verify::k_default_bench_entry; ///< the entry that runs llama-bench
  std::string state_dir; ///< the host record lives in <state_dir>/vms/<vm>/
  verify::BenchRequest request;
  /// The host's llama-bench run of the same model and sizes, and where it came from
  /// ("--host-json FILE", "--host-run").
  std::optional<std::vector<verify::LlamaBenchTest>> host;
  std::optional<std::string> host_source;
  /// The host run's JSON exactly as read, kept beside the guest runs' (bench_raw_files).
  std::optional<std::string> host_json;
  verify::BenchThresholds thresholds;
  /// The entry that runs llama-perplexity, and how far its unlocked (GPU) perplexity may drift
  /// from the stock (CPU) one (unset: verify::k_default_max_perplexity_drift).
  std::string perplexity_entry = verify::k_default_perplexity_entry;
  std::optional<double> max_perplexity_drift;
  std::string max_perplexity_drift_name = "bench.max_perplexity_drift";
  /// The host's llama-perplexity run on the same text and model (`--host-perplexity FILE`): its
  /// output as read (kept beside the guest runs') and the figures read from it.
  std::optional<std::string> host_perplexity_output;
  std::optional<verify::PerplexityRun> host_perplexity;
  /// The published run the bench reproduces (a recipe's bench.published), kept in the record
  /// so that `report` can set the measured figures beside the published ones.
  std::optional<verify::PublishedRun> published;
};

struct BenchOutcome {
  std::vector<verify::BenchRow> rows;
  verify::LlamaLogReport stock_log;
  verify::LlamaLogReport unlocked_log;
  verify::PerplexityComparison perplexity;
  /// verify::gate_bench, then verify::gate_perplexity: empty when the gate passes
  std::vector<std::string> failures;
  nlohmann::json record; ///< what went into the provenance record's "bench"
};

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

/// The two llama-bench runs' stdout (JSON) and stderr (the Metal log), then the host's JSON.
std::vector<BenchRawFile> bench_raw_files(const apply::GuestBench& measured,
                                          const std::optional<std::string>& host_json);

/// The bench record's "raw": {"stock.json": {"sha256": "<hex>", "size": N}, …}.
nlohmann::json bench_raw_record(const std::vector<BenchRawFile>& files);

/// "<state_dir>/vms/<vm>/bench", where a bench keeps exactly the last run's outputs. Fails
/// (usage) for a VM name provenance_path refuses.
Result<std::string> bench_raw_dir(const std::string& state_dir, const std::string& vm);

/// The options of a recipe's `bench:` block (create --bench, bake --bench); vm, state_dir and
/// the host figures are the caller's to fill in.
BenchOptions bench_options_from_recipe(const recipe::BenchSpec& spec);

/// One line for a plan: "entry 'llama-bench', model '/m.gguf', -p 512 -n 128 -r 3, gate
/// min_speedup 5, min_host_ratio pp=0.95, host figures from FILE".
std::string describe_bench(const BenchOptions& options);

/// `bench`: reads the guest's enablement, finds `entry` and `perplexity_entry` (usage error with
/// a "did you mean" hint when one is not on the list), runs llama-bench stock and unlocked, then
/// llama-perplexity on the CPU and unlocked on the GPU, compares and gates them, keeps the raw
/// outputs under bench_raw_dir and records the result in the VM's provenance record, guest
/// first, then host (keeping the published run an earlier bench of the same command recorded,
/// when `options` names none). A gate that fails is an outcome, not an error: the record says
/// so too.
Result<BenchOutcome> run_bench(guest::GuestSession& session,
                               const BenchOptions& options,
                               const util::ProgressCallback& progress);

/// The provenance record's "bench" object: what was run (entry, model, arguments), the build,
/// model and GPU llama-bench reported, the host's chip and source, each row's figures, the logs'
/// verdicts, thresholds, passed, failures, raw (of the llama-bench outputs) and published.
nlohmann::json bench_record(const BenchOptions& options,
                            const apply::GuestBench& measured,
                            const std::vector<verify::BenchRow>& rows,
                            const std::vector<std::string>& failures,
                            const std::string& measured_at);

/// One line for `status` and registry listings: "pp512 10.00x 97.7% of host, tg128 12.00x
/// (log fast, gate passed, 2026-12-03T10:00:00Z)". Empty for a record it cannot read.
std::string bench_summary(const nlohmann::json& record);

/// The manifest annotations `bake --bench` puts on the pushed image, from a bench record, keys
/// under oci::annotation::lume_unlock_bench_prefix: per test "<test>.speedup", ".stock_ts",
/// ".unlocked_ts" and ".host_ratio", then "model_type", "build_commit", "gpu", "host_chip",
/// "log" (the unlocked run's verdict), "passed", "perplexity.<side>" (the Final estimates),
/// "measured_at" and "summary", each only when the record has it. Values are strings, as Lume
/// reads annotations ([String:String]). A test name becomes a key part with every run of
/// characters outside [a-z0-9] as one '-' ("pp512 @ d4096" → "pp512-d4096").
oci::Annotations bench_annotations(const nlohmann::json& record);

} // namespace lume_unlock::pipeline
