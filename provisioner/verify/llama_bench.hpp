#pragma once

#include "util/result.hpp"

#include <cstddef>
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

} // namespace lume_unlock::verify
