#pragma once

#include "util/result.hpp"
#include "verify/llama_log.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::verify {

/// One test of a `llama-bench -o json` run: one element of the array it prints. Only the
/// fields lume-unlock uses are kept; they are read exactly as printed.
struct LlamaBenchTest {
  long long n_prompt = 0; ///< prompt tokens processed (pp), 0 for a generation test
  long long n_gen = 0;    ///< tokens generated (tg), 0 for a prompt-processing test
  long long n_depth = 0;  ///< context depth before the test (llama-bench -d), 0 when absent
  double avg_ts = 0;      ///< tokens per second, mean over the repetitions
  double stddev_ts = 0;   ///< its standard deviation
  /// Tokens per second of each repetition, in run order; empty when the output has none (a
  /// llama-bench older than `samples_ts`). The publisher's figures are their medians.
  std::vector<double> samples_ts;
  std::optional<std::string> backends;     ///< "MTL,BLAS"
  std::optional<std::string> gpu_info;     ///< "Apple Paravirtual device", "Apple M1 Ultra"
  std::optional<std::string> cpu_info;     ///< "Accelerate, Apple M1 Ultra (Virtual)"
  std::optional<std::string> model_type;   ///< "llama 1B Q4_K - Medium"
  std::optional<std::string> build_commit; ///< "ee3d1b54c"

  /// The name llama-bench's table gives the test: "pp512", "tg128", "pp512+tg128", with
  /// " @ d4096" appended for a depth.
  std::string name() const;
  /// "pp" (prompt only), "tg" (generation only) or "pg" (both): what --min-host-ratio keys on.
  std::string kind() const;
};

/// The largest llama-bench output read: a run prints about 1.4 KiB per test.
inline constexpr std::size_t k_max_llama_bench_bytes = 4u << 20;

/// Parses what `llama-bench -o json` printed on stdout. Fails (category verification, naming
/// `source` — "the stock run", a file name — and the element and field) on empty, truncated
/// or malformed JSON, on anything but a non-empty array of test objects, on a missing or
/// mistyped n_prompt/n_gen/avg_ts/stddev_ts, on a samples_ts that is not an array of figures
/// (it may be absent), on negative or non-finite figures, on a test that
/// neither processes a prompt nor generates, on two tests of the same name and on output over
/// k_max_llama_bench_bytes. Pure: no I/O.
Result<std::vector<LlamaBenchTest>> parse_llama_bench_json(std::string_view text,
                                                           const std::string& source);

/// What one llama-perplexity run printed (tools/perplexity/perplexity.cpp, docs/sources.md): the
/// running perplexity after each chunk on stdout ("[1]9.8731,[2]10.0210,"), and on stderr
/// "Final estimate: PPL = 9.8690 +/- 0.41234". A run whose text was too short prints neither,
/// and still exits 0.
struct PerplexityRun {
  std::vector<double> chunks;           ///< [1], [2], … in order
  std::optional<double> estimate;       ///< the Final estimate's PPL
  std::optional<double> uncertainty;    ///< its "+/-"
  std::optional<std::string> too_short; ///< the tool's "you need at least N tokens" line
};

/// Reads a run's two streams. Never fails: what is missing stays empty. Per-chunk values are
/// "[N]X," groups in order N = 1, 2, …; a group out of order or not a finite positive number
/// ends the list. The estimate is the last "Final estimate: PPL = X +/- Y" line. Also reads a
/// host's run saved as one stream (2>&1): pass it as both.
PerplexityRun parse_llama_perplexity(std::string_view stdout_text, std::string_view stderr_text);

/// The enablement entry that runs llama-perplexity unless told otherwise (`--perplexity-entry`,
/// a recipe's bench.perplexity_entry).
inline constexpr const char* k_default_perplexity_entry = "llama-perplexity";

/// The context and batch every bench run uses (-c, -b): llama-perplexity's default context,
/// and a batch of one context so each chunk is one decode on both sides.
inline constexpr int k_perplexity_context = 512;
inline constexpr int k_perplexity_batch = 512;

/// How far the unlocked perplexity may move from the stock (CPU) one, relative
/// (|unlocked - stock| / stock), unless a recipe's bench.max_perplexity_drift says otherwise.
/// Reasoning and sources: docs/sources.md, "Perplexity: CPU against Metal".
inline constexpr double k_default_max_perplexity_drift = 0.02;

/// "0.02" or "2%": a relative drift in (0, 1]. Fails (usage) naming `what`.
Result<double> parse_perplexity_drift(std::string_view text, const std::string& what);

/// The stock (-ngl 0) and unlocked (GPU) runs of one bench, and the host's when given.
struct PerplexityComparison {
  PerplexityRun stock;
  PerplexityRun unlocked;
  std::optional<PerplexityRun> host;
  double max_drift = k_default_max_perplexity_drift;
  std::string max_drift_name = "bench.max_perplexity_drift"; ///< how failures name the limit
};

/// |unlocked - reference| / reference, when both have an estimate.
std::optional<double> perplexity_drift(const PerplexityRun& reference,
                                       const PerplexityRun& unlocked);

/// One sentence per failure, both numbers in each: a run with no Final estimate, the unlocked
/// estimate too far from the stock one, or from the host's. Empty: correct.
std::vector<std::string> gate_perplexity(const PerplexityComparison& comparison);

/// The record's "perplexity": {context, batch, max_drift, stock, unlocked, host?, drift,
/// host_drift?}, each run as {estimate?, uncertainty?, chunks}.
nlohmann::json to_json(const PerplexityComparison& comparison);

/// "perplexity 9.873 vs 9.869 on CPU" (and ", 9.870 on the host"); empty without both
/// estimates. For the bench's text and the chart's caption; reads a record's "perplexity".
std::string perplexity_phrase(const nlohmann::json& perplexity);

/// The fixed text every bench's llama-perplexity runs read (-f): our own prose, 2,498 words,
/// provisioner/verify/perplexity-text.txt, compiled into the program. It tokenizes to well over
/// 2 × k_perplexity_context tokens, which llama-perplexity needs for even one chunk.
std::string_view perplexity_text();

/// Where the bench puts it in the guest, under the guest user's home.
inline constexpr const char* k_perplexity_text_guest_path =
    "Library/Application Support/LumeUnlock/bench/perplexity-text.txt";

/// How figures are written: 1.5 with 2 decimals → "1.50"; compact_number(0.95) → "0.95" (%g).
std::string fixed_decimals(double value, int decimals);
std::string compact_number(double value);

/// A decimal number ("0.95", "5": no sign, exponent or hex), or a percentage of one read as its
/// fraction ("95%" → 0.95).
std::optional<double> parse_fraction(std::string_view text);

/// What a bench asks llama-bench to measure: the flags of `lume-unlock bench` and the fields of
/// a recipe's `bench:` block, one struct for both so the defaults and limits cannot drift.
struct BenchRequest {
  std::string model;   ///< the model file's path in the guest
  int prompt = 512;    ///< -p
  int gen = 128;       ///< -n
  int repetitions = 3; ///< -r
  /// -t and -ngl, passed only when set (llama-bench's own defaults otherwise): the published
  /// run used -t 8 -ngl -1 (docs/sources.md).
  std::optional<int> threads;
  std::optional<int> gpu_layers;
};

/// "-p 512 -n 128 -r 10 -t 8 -ngl -1 -o json": the flags of every llama-bench run of a bench,
/// after "-m MODEL". One function, so published_command_mismatch sees the words the guest runs.
std::vector<std::string> llama_bench_flags(const BenchRequest& request);

/// The enablement entry a bench runs unless told otherwise (`--entry`, a recipe's bench.entry).
inline constexpr const char* k_default_bench_entry = "llama-bench";

/// The most tokens (-p, -n: far past any guest's context, low enough that a typo does not run
/// for days), repetitions (-r), threads (-t) and GPU layers (-ngl; -1 is "all of them").
inline constexpr int k_max_bench_tokens = 1 << 20;
inline constexpr int k_max_bench_repetitions = 1000;
inline constexpr int k_max_bench_threads = 1024;
inline constexpr int k_max_bench_gpu_layers = 100000;

/// The median of `samples`: the middle figure of an odd count, the mean of the two middle ones
/// of an even count, as the publisher computed it (results.csv's host_baremetal 517.8775 for
/// Gemma pp512 is the mean of the 5th and 6th of its 10 samples_ts, 517.857 and 517.898).
/// nullopt for no samples. Pure.
std::optional<double> median(std::vector<double> samples);

/// One test's figures from the medians of llama-bench's samples_ts: the statistic of the
/// published figures (docs/sources.md, "The published run"). avg_ts, llama-bench's mean, is
/// pulled by a single slow repetition; the median is not, which is why the two give different
/// speedups (TinyLlama tg128: 16.36x from medians, 17.08x from means).
struct MedianFigures {
  double stock_ts = 0;
  double unlocked_ts = 0;
  double speedup = 0;
  std::optional<double> host_ts;
  std::optional<double> host_ratio;
  /// How many samples each median was taken of (runs may differ: -r 3 beside -r 10).
  std::size_t stock_samples = 0;
  std::size_t unlocked_samples = 0;
  std::optional<std::size_t> host_samples;
};

/// The median figures of one test, or nullopt when either guest run has no samples_ts or the
/// stock median is 0 (no speedup to give). `host` adds the host's median and share when it
/// has samples (and a median above 0); without, the figures have no host part.
std::optional<MedianFigures> median_figures(const LlamaBenchTest& stock,
                                            const LlamaBenchTest& unlocked,
                                            const LlamaBenchTest* host);

/// The host keys only when known.
nlohmann::json to_json(const MedianFigures& figures);

/// The statistic of every published figure: the publisher's results.csv gives the ratio of
/// the medians of llama-bench's samples_ts (docs/sources.md, "The published run").
inline constexpr const char* k_published_statistic = "median of samples_ts";

/// A published run that a bench reproduces (a recipe's bench.published): the figures its
/// publisher gave, per test kind, the command they were measured with, and where they were
/// read. Facts about the outside world, so they live in the recipe that reproduces the run,
/// beside their source, not in the program.
struct PublishedRun {
  std::string source;  ///< where the figures were read, e.g. a docs/sources.md row
  std::string command; ///< "llama-bench -p 512 -n 128 -r 10 -t 8 -ngl -1 -o json"
  std::map<std::string, double> speedup;    ///< kind ("pp", "tg", "pg") → unlocked / stock
  std::map<std::string, double> host_ratio; ///< kind → unlocked / host (0.9959 = 99.59 %)
};

/// Why the bench `request` does not run `command`, or nullopt when it does. `command` is the
/// program (any path ending in llama-bench) and flag/value pairs in any order; a -m/--model
/// pair is left out of the comparison (the model's path in the guest is the recipe's), every
/// other pair must be the one llama_bench_flags(request) gives. Pure.
std::optional<std::string> published_command_mismatch(const BenchRequest& request,
                                                      std::string_view command);

/// "llama-bench -p 512 … -o json": the command a bench runs, as published_command_mismatch
/// reads it (without -m).
std::string bench_command(const BenchRequest& request);

/// What a bench record keeps, so that a report can set its figures beside the published ones.
nlohmann::json to_json(const PublishedRun& run);

/// One test measured in the guest without and with the shim, and on the host when known.
struct BenchRow {
  std::string test; ///< "pp512"
  std::string kind; ///< "pp", "tg" or "pg" (LlamaBenchTest::kind)
  double stock_ts = 0;
  double stock_stddev_ts = 0;
  double unlocked_ts = 0;
  double unlocked_stddev_ts = 0;
  double speedup = 0;
  std::optional<double> host_ts;
  std::optional<double> host_stddev_ts;
  std::optional<double> host_ratio; ///< 0.949 = 94.9 % of host
  /// The same comparison from the medians of samples_ts (the publisher's statistic); the
  /// figures above are llama-bench's means (avg_ts). Absent when a run printed no samples.
  std::optional<MedianFigures> median;
};

/// The rows of `stock` and `unlocked` (the same tests, matched by name, in the unlocked run's
/// order), with the host's figures of the same tests when `host` is given. Fails (category
/// verification) when the two guest runs measured different tests or a stock figure is 0, and
/// when a host run was given but has none of the tests.
Result<std::vector<BenchRow>> compare_bench(const std::vector<LlamaBenchTest>& stock,
                                            const std::vector<LlamaBenchTest>& unlocked,
                                            const std::optional<std::vector<LlamaBenchTest>>& host);

/// The host keys only when known, "median" only when both guest runs printed samples_ts.
nlohmann::json to_json(const BenchRow& row);

/// The table `bench` prints: test, stock t/s, unlocked t/s, speedup, and host t/s and % of
/// host when any row has them. Every line ends in '\n'.
std::string render_bench_table(const std::vector<BenchRow>& rows);

/// What a bench must reach: `--min-speedup`, `--min-host-ratio`, or a recipe's `bench:`.
struct BenchThresholds {
  std::optional<double> min_speedup;            ///< unlocked / stock, every test
  std::map<std::string, double> min_host_ratio; ///< "pp"/"tg"/"pg" → unlocked / host
  /// How gate_bench's sentences name the two thresholds: the flags, or a recipe's fields
  /// ("bench.min_speedup"), so a failure points at what the user wrote.
  std::string min_speedup_name = "--min-speedup";
  std::string min_host_ratio_name = "--min-host-ratio";

  bool empty() const { return !min_speedup && min_host_ratio.empty(); }
};

/// "5" or "5x": a speedup of at least 1. Fails (usage) naming `what` otherwise.
Result<double> parse_min_speedup(std::string_view text, const std::string& what);

/// The kinds a host-ratio threshold names: pp (prompt processing), tg (generation), pg (both).
inline constexpr const char* k_bench_kinds[] = {"pp", "tg", "pg"};

/// One share of host: "0.95", or a percentage "95%" read as its fraction; in [0.01, 2]. Fails
/// (usage) naming `what`.
Result<double> parse_host_ratio(std::string_view text, const std::string& what);

/// "pp=0.95,tg=0.70": kinds pp, tg, pg, each once, ratios in [0.01, 2]. A percentage
/// ("pp=95%") is read as its fraction. Fails (usage) naming `what` and the bad part.
Result<std::map<std::string, double>> parse_min_host_ratio(std::string_view text,
                                                           const std::string& what);

/// The form parse_min_host_ratio reads.
std::string format_host_ratio(const std::map<std::string, double>& ratios);

/// Why the unlocked run did not run unlocked, or not correctly, from its Metal log: set for the
/// verdicts broken (naming the first failure line and its fix), shim-inactive, stock and
/// unsafe-profile; empty for fast and partial, for shim-enabled, and for no-metal-log (which
/// says nothing about the shim).
std::optional<std::string> unlocked_log_problem(const LlamaLogReport& unlocked_log);

/// Every figure that falls short, one sentence each ("tg128: speedup 1.02x is below
/// --min-speedup 5"), then the log problem when there is one. Empty: the gate passes. A
/// host-ratio threshold for a kind whose rows have no host figure is a failure too (nothing
/// to compare with is not a pass).
std::vector<std::string> gate_bench(const std::vector<BenchRow>& rows,
                                    const BenchThresholds& thresholds,
                                    const LlamaLogReport& unlocked_log);

nlohmann::json to_json(const BenchThresholds& thresholds);

} // namespace lume_unlock::verify
