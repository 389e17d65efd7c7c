#pragma once

#include "util/result.hpp"
#include "verify/bench_request.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace lume_unlock::verify {

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

/// {"source","command","statistic","speedup":{kind: x},"host_ratio":{kind: r}}: what a bench
/// record keeps, so that a report of the VM can set its figures beside the published ones.
nlohmann::json to_json(const PublishedRun& run);

} // namespace lume_unlock::verify
