#pragma once

#include "verify/llama_bench.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <vector>

namespace lume_unlock::verify {

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
  double speedup = 0; ///< unlocked_ts / stock_ts
  std::optional<double> host_ts;
  std::optional<double> host_ratio; ///< unlocked_ts / host_ts
  /// How many samples each median was taken of: the repetitions each run made. They may differ
  /// between runs (a run with -r 3 beside one with -r 10); the figures are still each run's
  /// median, and the report says so.
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

/// {"stock_ts","unlocked_ts","speedup","host_ts","host_ratio","samples":{"stock","unlocked",
/// "host"}}; the host keys only when known.
nlohmann::json to_json(const MedianFigures& figures);

} // namespace lume_unlock::verify
