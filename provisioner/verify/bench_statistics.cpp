#include "verify/bench_statistics.hpp"

#include <algorithm>

namespace lume_unlock::verify {

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

} // namespace lume_unlock::verify
