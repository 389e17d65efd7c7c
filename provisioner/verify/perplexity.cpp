#include "util/json_reader.hpp"
#include "util/text_check.hpp"
#include "verify/bench.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace lume_unlock::verify {

namespace {

/// The number at the start of `text` (at most 32 characters of it), and how many it took.
/// Only finite positive values: "nan" or "inf" is what a broken run prints, not a figure.
std::optional<double> leading_number(std::string_view text, std::size_t& used) {
  std::size_t length = 0;
  while (length < text.size() && length < 32 &&
         std::string_view("0123456789.eE+-").find(text[length]) != std::string_view::npos) {
    ++length;
  }
  const std::string copy(text.substr(0, length));
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  used = static_cast<std::size_t>(end - copy.c_str());
  if (used == 0 || !std::isfinite(value) || value <= 0) {
    return std::nullopt;
  }
  return value;
}

std::vector<double> chunk_values(std::string_view text) {
  std::vector<double> out;
  std::size_t at = 0;
  while (true) {
    const std::string tag = "[" + std::to_string(out.size() + 1) + "]";
    const std::size_t found = text.find(tag, at);
    if (found == std::string_view::npos) {
      return out;
    }
    std::size_t used = 0;
    const auto value = leading_number(text.substr(found + tag.size()), used);
    const std::size_t after = found + tag.size() + used;
    if (!value || after >= text.size() || text[after] != ',') {
      return out;
    }
    out.push_back(*value);
    at = after + 1;
  }
}

std::string line_at(std::string_view text, std::size_t at) {
  const std::size_t start = text.rfind('\n', at);
  const std::size_t begin = start == std::string_view::npos ? 0 : start + 1;
  const std::size_t end = text.find('\n', at);
  return std::string(text.substr(begin, end == std::string_view::npos ? end : end - begin));
}

nlohmann::json run_json(const PerplexityRun& run) {
  nlohmann::json out = {{"chunks", run.chunks}};
  if (run.estimate) {
    out["estimate"] = *run.estimate;
  }
  if (run.uncertainty) {
    out["uncertainty"] = *run.uncertainty;
  }
  return out;
}

/// "the unlocked run printed no Final estimate (…)": why a run has no figure.
std::string missing(const std::string& side, const PerplexityRun& run) {
  std::string why = "the " + side + " llama-perplexity run printed no 'Final estimate' line";
  if (run.too_short) {
    return why + " (" + *run.too_short + ")";
  }
  if (!run.chunks.empty()) {
    return why + " (last chunk value " + fixed_decimals(run.chunks.back(), 4) + ")";
  }
  return why + " (nor any chunk value: the run is broken or printed non-finite values)";
}

} // namespace

PerplexityRun parse_llama_perplexity(std::string_view stdout_text, std::string_view stderr_text) {
  PerplexityRun out;
  out.chunks = chunk_values(stdout_text);
  const std::string_view mark = "Final estimate: PPL = ";
  const std::size_t found = stderr_text.rfind(mark);
  if (found != std::string_view::npos) {
    std::size_t used = 0;
    const std::string_view rest = stderr_text.substr(found + mark.size());
    out.estimate = leading_number(rest, used);
    const std::string_view plus_minus = " +/- ";
    if (out.estimate && rest.substr(used, plus_minus.size()) == plus_minus) {
      std::size_t ignored = 0;
      out.uncertainty = leading_number(rest.substr(used + plus_minus.size()), ignored);
    }
  }
  const std::size_t short_at = stderr_text.find("you need at least ");
  if (short_at != std::string_view::npos) {
    out.too_short = util::quote_for_message(line_at(stderr_text, short_at));
  }
  return out;
}

Result<double> parse_perplexity_drift(std::string_view text, const std::string& what) {
  const auto value = parse_fraction(text);
  if (!value || *value <= 0 || *value > 1) {
    return Error(ErrorCategory::usage,
                 what,
                 util::quote_for_message(text) + " is not a relative drift in (0, 1]",
                 "give how far the unlocked perplexity may move from the CPU's, e.g. 0.02 (or "
                 "2%)");
  }
  return *value;
}

std::optional<double> perplexity_drift(const PerplexityRun& reference,
                                       const PerplexityRun& unlocked) {
  if (!reference.estimate || !unlocked.estimate) {
    return std::nullopt;
  }
  return std::fabs(*unlocked.estimate - *reference.estimate) / *reference.estimate;
}

std::vector<std::string> gate_perplexity(const PerplexityComparison& c) {
  std::vector<std::string> failures;
  const std::string limit =
      " (" + c.max_drift_name + " " + fixed_decimals(c.max_drift * 100, 2) + "%, relative)";
  for (const auto& [side, run] : {std::pair<std::string, const PerplexityRun*>{"stock", &c.stock},
                                  {"unlocked", &c.unlocked}}) {
    if (!run->estimate) {
      failures.push_back(missing(side, *run));
    }
  }
  if (c.host && !c.host->estimate) {
    failures.push_back("the host's llama-perplexity output has no 'Final estimate' line");
  }
  if (!failures.empty()) {
    return failures;
  }
  const double drift = *perplexity_drift(c.stock, c.unlocked);
  if (drift > c.max_drift) {
    failures.push_back("unlocked perplexity " + fixed_decimals(*c.unlocked.estimate, 4) +
                       " is not the stock (CPU) run's " + fixed_decimals(*c.stock.estimate, 4) +
                       ": it drifted " + fixed_decimals(drift * 100, 2) + "%" + limit +
                       "; the unlocked GPU computes different answers");
  }
  if (c.host) {
    const double host_drift = *perplexity_drift(*c.host, c.unlocked);
    if (host_drift > c.max_drift) {
      failures.push_back("unlocked perplexity " + fixed_decimals(*c.unlocked.estimate, 4) +
                         " is not the host's " + fixed_decimals(*c.host->estimate, 4) +
                         ": it drifted " + fixed_decimals(host_drift * 100, 2) + "%" + limit);
    }
  }
  return failures;
}

nlohmann::json to_json(const PerplexityComparison& c) {
  nlohmann::json out = {{"context", k_perplexity_context},
                        {"batch", k_perplexity_batch},
                        {"max_drift", c.max_drift},
                        {"stock", run_json(c.stock)},
                        {"unlocked", run_json(c.unlocked)}};
  if (auto drift = perplexity_drift(c.stock, c.unlocked)) {
    out["drift"] = *drift;
  }
  if (c.host) {
    out["host"] = run_json(*c.host);
    if (auto drift = perplexity_drift(*c.host, c.unlocked)) {
      out["host_drift"] = *drift;
    }
  }
  return out;
}

std::string perplexity_phrase(const nlohmann::json& perplexity) {
  // A record's "perplexity" read back: a phrase only when both estimates are there.
  const auto phrase = util::read_json(
      perplexity,
      {ErrorCategory::failure, "a bench record's perplexity"},
      [](const util::JsonValue& value) {
        const util::JsonObject runs = value.object();
        const auto estimate = [&](const char* side) {
          const auto run = runs.find(side);
          return run ? run->object().optional("estimate", &util::JsonValue::number) : std::nullopt;
        };
        const auto stock = estimate("stock");
        const auto unlocked = estimate("unlocked");
        const auto host = estimate("host");
        if (!stock || !unlocked) {
          return std::string();
        }
        return "perplexity " + fixed_decimals(*unlocked, 3) + " vs " + fixed_decimals(*stock, 3) +
               " on CPU" + (host ? ", " + fixed_decimals(*host, 3) + " on the host" : "");
      });
  return phrase.ok() ? phrase.value() : std::string();
}

} // namespace lume_unlock::verify
