#pragma once

#include "util/result.hpp"
#include "verify/bench_compare.hpp"
#include "verify/llama_log.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::verify {

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

/// "pp=0.95,tg=0.7": the form parse_min_host_ratio reads.
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

/// {"min_speedup": 5, "min_host_ratio": {"pp": 0.95}}, keys only when set.
nlohmann::json to_json(const BenchThresholds& thresholds);

} // namespace lume_unlock::verify
