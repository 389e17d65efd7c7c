#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::verify {

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
/// after "-m MODEL" (apply::llama_bench_arguments). One function, so that the check that a
/// recipe's bench runs its published command (verify/published_run) sees the very words the
/// guest runs.
std::vector<std::string> llama_bench_flags(const BenchRequest& request);

/// The enablement entry a bench runs unless told otherwise (`--entry`, a recipe's bench.entry).
inline constexpr const char* k_default_bench_entry = "llama-bench";

/// The most prompt or generated tokens a bench may ask for (-p, -n): far past any context a
/// guest can hold, low enough that a typo does not run for days.
inline constexpr int k_max_bench_tokens = 1 << 20;
/// The most repetitions (-r).
inline constexpr int k_max_bench_repetitions = 1000;
/// The most threads (-t) and GPU layers (-ngl; -1 is llama-bench's "all of them").
inline constexpr int k_max_bench_threads = 1024;
inline constexpr int k_max_bench_gpu_layers = 100000;

} // namespace lume_unlock::verify
