#pragma once

#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::verify {

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

} // namespace lume_unlock::verify
