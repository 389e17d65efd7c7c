#include "verify/bench.hpp"

#include "util/text.hpp"
#include "util/text_check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <set>
#include <sstream>

namespace lume_unlock::verify {

std::string fixed_decimals(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string compact_number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

std::vector<std::string> llama_bench_flags(const BenchRequest& request) {
  std::vector<std::string> flags = {"-p",
                                    std::to_string(request.prompt),
                                    "-n",
                                    std::to_string(request.gen),
                                    "-r",
                                    std::to_string(request.repetitions)};
  if (request.threads) {
    flags.insert(flags.end(), {"-t", std::to_string(*request.threads)});
  }
  if (request.gpu_layers) {
    flags.insert(flags.end(), {"-ngl", std::to_string(*request.gpu_layers)});
  }
  flags.insert(flags.end(), {"-o", "json"});
  return flags;
}

std::optional<double> median(std::vector<double> samples) {
  if (samples.empty()) {
    return std::nullopt;
  }
  const std::size_t middle = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + middle, samples.end());
  const double upper = samples[middle];
  if (samples.size() % 2 == 1) {
    return upper;
  }
  // The lower middle is the largest of the figures nth_element left before `middle`.
  const double lower = *std::max_element(samples.begin(), samples.begin() + middle);
  return (lower + upper) / 2;
}

std::optional<MedianFigures> median_figures(const LlamaBenchTest& stock,
                                            const LlamaBenchTest& unlocked,
                                            const LlamaBenchTest* host) {
  const auto stock_median = median(stock.samples_ts);
  const auto unlocked_median = median(unlocked.samples_ts);
  if (!stock_median || !unlocked_median || *stock_median <= 0) {
    return std::nullopt;
  }
  MedianFigures out;
  out.stock_ts = *stock_median;
  out.unlocked_ts = *unlocked_median;
  out.speedup = *unlocked_median / *stock_median;
  out.stock_samples = stock.samples_ts.size();
  out.unlocked_samples = unlocked.samples_ts.size();
  if (host != nullptr) {
    const auto host_median = median(host->samples_ts);
    if (host_median && *host_median > 0) {
      out.host_ts = *host_median;
      out.host_ratio = *unlocked_median / *host_median;
      out.host_samples = host->samples_ts.size();
    }
  }
  return out;
}

nlohmann::json to_json(const MedianFigures& figures) {
  nlohmann::json out = {
      {"stock_ts", figures.stock_ts},
      {"unlocked_ts", figures.unlocked_ts},
      {"speedup", figures.speedup},
      {"samples", {{"stock", figures.stock_samples}, {"unlocked", figures.unlocked_samples}}}};
  if (figures.host_ts) {
    out["host_ts"] = *figures.host_ts;
    out["host_ratio"] = *figures.host_ratio;
    out["samples"]["host"] = figures.host_samples.value_or(0);
  }
  return out;
}

namespace {

const LlamaBenchTest* find_test(const std::vector<LlamaBenchTest>& tests, const std::string& name) {
  for (const LlamaBenchTest& test : tests) {
    if (test.name() == name) {
      return &test;
    }
  }
  return nullptr;
}

std::string names(const std::vector<LlamaBenchTest>& tests) {
  return util::join(tests, ", ", [](const LlamaBenchTest& test) { return test.name(); });
}

std::string pad(const std::string& text, std::size_t width, bool right) {
  if (text.size() >= width) {
    return text;
  }
  const std::string fill(width - text.size(), ' ');
  return right ? fill + text : text + fill;
}

} // namespace

Result<std::vector<BenchRow>>
compare_bench(const std::vector<LlamaBenchTest>& stock,
              const std::vector<LlamaBenchTest>& unlocked,
              const std::optional<std::vector<LlamaBenchTest>>& host) {
  const auto mismatch = [&] {
    return Error(ErrorCategory::verification,
                 "comparing the stock and unlocked llama-bench runs",
                 "they measured different tests (stock: " + names(stock) +
                     "; unlocked: " + names(unlocked) + ")",
                 "run both with the same -p/-n/-d arguments");
  };
  if (stock.size() != unlocked.size()) {
    return mismatch();
  }
  std::vector<BenchRow> rows;
  bool any_host = false;
  for (const LlamaBenchTest& test : unlocked) {
    const LlamaBenchTest* before = find_test(stock, test.name());
    if (before == nullptr) {
      return mismatch();
    }
    if (before->avg_ts <= 0) {
      return Error(ErrorCategory::verification,
                   "comparing the stock and unlocked llama-bench runs",
                   "the stock run's " + test.name() + " is 0 t/s, so there is no speedup to give",
                   "check the stock run's output; it should measure a positive rate");
    }
    BenchRow row;
    row.test = test.name();
    row.kind = test.kind();
    row.stock_ts = before->avg_ts;
    row.stock_stddev_ts = before->stddev_ts;
    row.unlocked_ts = test.avg_ts;
    row.unlocked_stddev_ts = test.stddev_ts;
    row.speedup = test.avg_ts / before->avg_ts;
    const LlamaBenchTest* bare = host ? find_test(*host, test.name()) : nullptr;
    row.median = median_figures(*before, test, bare);
    if (host) {
      if (bare != nullptr && bare->avg_ts > 0) {
        row.host_ts = bare->avg_ts;
        row.host_stddev_ts = bare->stddev_ts;
        row.host_ratio = test.avg_ts / bare->avg_ts;
        any_host = true;
      }
    }
    rows.push_back(row);
  }
  if (host && !any_host) {
    return Error(ErrorCategory::verification,
                 "comparing with the host's llama-bench run",
                 "it has none of the guest's tests (host: " + names(*host) +
                     "; guest: " + names(unlocked) + ")",
                 "run llama-bench on the host with the same -p/-n arguments");
  }
  return rows;
}

nlohmann::json to_json(const BenchRow& row) {
  nlohmann::json out = {{"test", row.test},
                        {"kind", row.kind},
                        {"stock_ts", row.stock_ts},
                        {"stock_stddev_ts", row.stock_stddev_ts},
                        {"unlocked_ts", row.unlocked_ts},
                        {"unlocked_stddev_ts", row.unlocked_stddev_ts},
                        {"speedup", row.speedup}};
  if (row.host_ts) {
    out["host_ts"] = *row.host_ts;
    out["host_stddev_ts"] = row.host_stddev_ts.value_or(0);
    out["host_ratio"] = *row.host_ratio;
  }
  if (row.median) {
    out["median"] = to_json(*row.median);
  }
  return out;
}

std::string render_bench_table(const std::vector<BenchRow>& rows) {
  const bool with_host = std::any_of(
      rows.begin(), rows.end(), [](const BenchRow& row) { return row.host_ts.has_value(); });
  std::vector<std::vector<std::string>> cells = {{"test", "stock t/s", "unlocked t/s", "speedup"}};
  if (with_host) {
    cells[0].push_back("host t/s");
    cells[0].push_back("of host");
  }
  for (const BenchRow& row : rows) {
    std::vector<std::string> line = {
        row.test,
        fixed_decimals(row.stock_ts, 2) + " ± " + fixed_decimals(row.stock_stddev_ts, 2),
        fixed_decimals(row.unlocked_ts, 2) + " ± " + fixed_decimals(row.unlocked_stddev_ts, 2),
        fixed_decimals(row.speedup, 2) + "x"};
    if (with_host) {
      line.push_back(row.host_ts ? fixed_decimals(*row.host_ts, 2) : "-");
      line.push_back(row.host_ratio ? fixed_decimals(*row.host_ratio * 100, 1) + "%" : "-");
    }
    cells.push_back(line);
  }
  std::vector<std::size_t> widths(cells[0].size(), 0);
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < line.size(); ++i) {
      // "±" is two bytes and one column.
      const std::size_t columns = line[i].size() - (line[i].find("±") != std::string::npos ? 1 : 0);
      widths[i] = std::max(widths[i], columns);
    }
  }
  std::string out;
  for (const auto& line : cells) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const std::size_t extra = line[i].find("±") != std::string::npos ? 1 : 0;
      text += (i == 0 ? "" : "  ") + pad(line[i], widths[i] + extra, i > 0);
    }
    out += text + "\n";
  }
  return out;
}

// The gate: the thresholds, their parsers, and what falls short of them.

namespace {

/// A decimal number and nothing else: no sign, no exponent, no hex.
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
  const auto value = parse_fraction(text);
  return value && *value >= 0.01 && *value <= 2 ? value : std::nullopt;
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

std::optional<double> parse_fraction(std::string_view text) {
  const bool percent = !text.empty() && text.back() == '%';
  const auto value = plain_number(percent ? text.substr(0, text.size() - 1) : text);
  return value && percent ? *value / 100 : value;
}

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
