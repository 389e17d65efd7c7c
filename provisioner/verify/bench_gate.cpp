#include "util/text.hpp"
#include "util/text_check.hpp"
#include "verify/bench.hpp"
#include "verify/llama_log.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <set>
#include <sstream>
#include <vector>

namespace lume_unlock::verify {

namespace {

/// A decimal number and nothing else ("0.95", "5"), no sign, no exponent, no hex.
std::optional<double> plain_number(std::string_view text) {
  if (text.empty() || text.size() > 32 ||
      text.find_first_not_of("0123456789.") != std::string_view::npos ||
      text.find('.') != text.rfind('.') || text.front() == '.' || text.back() == '.') {
    return std::nullopt;
  }
  return std::strtod(std::string(text).c_str(), nullptr);
}

/// "0.95" or "95%" as a fraction in [0.01, 2].
std::optional<double> ratio_of(std::string_view text) {
  const bool percent = !text.empty() && text.back() == '%';
  if (percent) {
    text.remove_suffix(1);
  }
  auto value = plain_number(text);
  if (value && percent) {
    *value /= 100;
  }
  if (!value || *value < 0.01 || *value > 2) {
    return std::nullopt;
  }
  return value;
}

/// The flag/value pairs of a llama-bench command line without its program word and -m pair,
/// or nullopt when a flag has no value.
std::optional<std::map<std::string, std::string>>
flag_pairs(const std::vector<std::string>& words) {
  std::map<std::string, std::string> out;
  if (words.size() % 2 != 0) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < words.size(); i += 2) {
    if (words[i] != "-m" && words[i] != "--model") {
      out[words[i]] = words[i + 1];
    }
  }
  return out;
}

} // namespace

Result<double> parse_min_speedup(std::string_view text, const std::string& what) {
  std::string_view number = text;
  if (!number.empty() && (number.back() == 'x' || number.back() == 'X')) {
    number.remove_suffix(1);
  }
  const auto value = plain_number(number);
  if (!value || *value < 1) {
    return Error(ErrorCategory::usage,
                 what,
                 util::quote_for_message(text) + " is not a speedup of at least 1",
                 "give the factor the unlocked run must reach over the stock run, e.g. 5 or 5x");
  }
  return *value;
}

Result<double> parse_host_ratio(std::string_view text, const std::string& what) {
  const auto value = ratio_of(text);
  if (!value) {
    return Error(ErrorCategory::usage,
                 what,
                 util::quote_for_message(text) + " is not a share of host in [0.01, 2]",
                 "give the fraction of the host's t/s the unlocked run must reach, e.g. 0.95 "
                 "(or 95%)");
  }
  return *value;
}

Result<std::map<std::string, double>> parse_min_host_ratio(std::string_view text,
                                                           const std::string& what) {
  const std::string hint = "give kind=ratio pairs for pp (prompt processing), tg (generation) "
                           "or pg (both), e.g. pp=0.95,tg=0.70";
  std::map<std::string, double> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view part = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::size_t equals = part.find('=');
    const std::string kind(part.substr(0, equals));
    const bool known = std::find(std::begin(k_bench_kinds), std::end(k_bench_kinds), kind) !=
                       std::end(k_bench_kinds);
    if (equals == std::string_view::npos || !known) {
      return Error(ErrorCategory::usage,
                   what,
                   util::quote_for_message(part) + " is not one of pp=R, tg=R or pg=R",
                   hint);
    }
    const auto value = ratio_of(part.substr(equals + 1));
    if (!value) {
      return Error(ErrorCategory::usage,
                   what,
                   util::quote_for_message(part) + " has no ratio in [0.01, 2]",
                   hint);
    }
    if (!out.emplace(kind, *value).second) {
      return Error(ErrorCategory::usage, what, kind + " is given twice", hint);
    }
    if (comma == std::string_view::npos) {
      break;
    }
    start = comma + 1;
  }
  return out;
}

std::string format_host_ratio(const std::map<std::string, double>& ratios) {
  return util::join(ratios, ",", [](const auto& ratio) {
    return ratio.first + "=" + compact_number(ratio.second);
  });
}

std::optional<std::string> unlocked_log_problem(const LlamaLogReport& unlocked_log) {
  switch (unlocked_log.verdict) {
  case LlamaLogVerdict::shim_inactive:
    return std::string("the shim was inactive in the unlocked run: its Metal log is "
                       "shim-inactive (llama.cpp saw the stock device)");
  case LlamaLogVerdict::stock:
    return std::string("the unlocked run ran at stock: its Metal log is stock (SIMD-group "
                       "reduction off)");
  case LlamaLogVerdict::unsafe_profile:
    return std::string("the unlocked run's Metal log is unsafe-profile (answers no real GPU "
                       "gives); its figures do not count");
  case LlamaLogVerdict::broken:
    return "the unlocked run's Metal log is broken: " +
           (unlocked_log.failures.empty()
                ? std::string("ggml-metal reported a failure")
                : describe_failure(unlocked_log.failures.front(), unlocked_log.run.process));
  case LlamaLogVerdict::fast:
  case LlamaLogVerdict::partial:
  case LlamaLogVerdict::no_metal_log:
  case LlamaLogVerdict::shim_enabled:
    break;
  }
  return std::nullopt;
}

std::vector<std::string> gate_bench(const std::vector<BenchRow>& rows,
                                    const BenchThresholds& thresholds,
                                    const LlamaLogReport& unlocked_log) {
  std::vector<std::string> failures;
  std::set<std::string> kinds_with_host;
  for (const BenchRow& row : rows) {
    if (thresholds.min_speedup && row.speedup < *thresholds.min_speedup) {
      failures.push_back(row.test + ": speedup " + fixed_decimals(row.speedup, 2) + "x is below " +
                         thresholds.min_speedup_name + " " +
                         compact_number(*thresholds.min_speedup));
    }
    const auto ratio = thresholds.min_host_ratio.find(row.kind);
    if (ratio == thresholds.min_host_ratio.end() || !row.host_ratio) {
      continue;
    }
    kinds_with_host.insert(row.kind);
    if (*row.host_ratio < ratio->second) {
      failures.push_back(row.test + ": " + fixed_decimals(*row.host_ratio * 100, 1) +
                         "% of host is below " + thresholds.min_host_ratio_name + " " + row.kind +
                         "=" + compact_number(ratio->second));
    }
  }
  for (const auto& [kind, ratio] : thresholds.min_host_ratio) {
    if (kinds_with_host.count(kind) == 0) {
      failures.push_back(thresholds.min_host_ratio_name + " " + kind + "=" + compact_number(ratio) +
                         ": no " + kind +
                         " test has a host figure to compare with "
                         "(give --host-json FILE or --host-run)");
    }
  }
  if (auto problem = unlocked_log_problem(unlocked_log)) {
    failures.push_back(*problem);
  }
  return failures;
}

nlohmann::json to_json(const BenchThresholds& thresholds) {
  nlohmann::json out = nlohmann::json::object();
  if (thresholds.min_speedup) {
    out["min_speedup"] = *thresholds.min_speedup;
  }
  if (!thresholds.min_host_ratio.empty()) {
    out["min_host_ratio"] = thresholds.min_host_ratio;
  }
  return out;
}

std::string bench_command(const BenchRequest& request) {
  std::string out = "llama-bench";
  for (const std::string& word : llama_bench_flags(request)) {
    out += " " + word;
  }
  return out;
}

std::optional<std::string> published_command_mismatch(const BenchRequest& request,
                                                      std::string_view command) {
  std::istringstream in{std::string(command)};
  std::vector<std::string> words;
  for (std::string word; in >> word;) {
    words.push_back(word);
  }
  const std::string ours = bench_command(request);
  if (words.empty() || !util::ends_with(words.front(), "llama-bench")) {
    return util::quote_for_message(command) + " is not a llama-bench command (the bench runs " +
           util::quote_for_message(ours) + ")";
  }
  const auto published = flag_pairs({words.begin() + 1, words.end()});
  if (!published) {
    return util::quote_for_message(command) + " has a flag without a value";
  }
  if (*published != *flag_pairs(llama_bench_flags(request))) {
    return "the bench runs " + util::quote_for_message(ours) + ", not the published " +
           util::quote_for_message(command);
  }
  return std::nullopt;
}

nlohmann::json to_json(const PublishedRun& run) {
  return {{"source", run.source},
          {"command", run.command},
          {"statistic", k_published_statistic},
          {"speedup", run.speedup},
          {"host_ratio", run.host_ratio}};
}

} // namespace lume_unlock::verify
