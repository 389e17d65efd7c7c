#include "verify/bench.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <cstdio>

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

} // namespace lume_unlock::verify
