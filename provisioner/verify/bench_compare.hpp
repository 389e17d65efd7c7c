#pragma once

#include "util/result.hpp"
#include "verify/bench_statistics.hpp"
#include "verify/llama_bench.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::verify {

/// One test measured in the guest without and with the shim, and on the host when known.
struct BenchRow {
  std::string test; ///< "pp512"
  std::string kind; ///< "pp", "tg" or "pg" (LlamaBenchTest::kind)
  double stock_ts = 0;
  double stock_stddev_ts = 0;
  double unlocked_ts = 0;
  double unlocked_stddev_ts = 0;
  double speedup = 0;            ///< unlocked_ts / stock_ts
  std::optional<double> host_ts; ///< the host's figure for the same test
  std::optional<double> host_stddev_ts;
  std::optional<double> host_ratio; ///< unlocked_ts / host_ts (0.949 = 94.9 % of host)
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

/// {"test","kind","stock_ts","stock_stddev_ts","unlocked_ts","unlocked_stddev_ts","speedup",
///  "host_ts","host_stddev_ts","host_ratio","median"}; the host keys only when known, "median"
///  (to_json of MedianFigures) only when both guest runs printed samples_ts.
nlohmann::json to_json(const BenchRow& row);

/// The table `bench` prints: test, stock t/s, unlocked t/s, speedup, and host t/s and % of
/// host when any row has them. Every line ends in '\n'.
std::string render_bench_table(const std::vector<BenchRow>& rows);

} // namespace lume_unlock::verify
