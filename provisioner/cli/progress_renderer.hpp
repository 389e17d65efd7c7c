#pragma once

#include "cli/context.hpp"
#include "util/progress.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace lume_unlock::cli {

/// Turns library progress events into output on the error stream:
/// - a terminal: one line redrawn in place (a bar when the total is known);
/// - not a terminal: a plain line when something changed, at most one a second per step,
///   plus the final line of every step (so CI logs stay short);
/// - --json: one JSON object per line ({"progress": {...}}), throttled the same way, keeping
///   stdout free for the command's single result document;
/// - --quiet: nothing.
class ProgressRenderer {
public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  explicit ProgressRenderer(const Context& context, Clock clock = std::chrono::steady_clock::now);
  ~ProgressRenderer();

  void operator()(const util::ProgressEvent& event);
  /// A callback bound to this renderer (which must outlive it).
  util::ProgressCallback callback();

  /// The text of one event ("pull  42% [########..........] 4.2 GB / 10.0 GB  detail"). With
  /// a byte rate (measured by the renderer since the step began) a byte event also shows it and,
  /// while the total is known and not reached, the time left:
  /// "... 4.2 GB / 10.0 GB  52.0 MB/s  ETA 1m52s". Models are gigabytes: people want to know.
  static std::string format(const util::ProgressEvent& event,
                            std::optional<double> bytes_per_second = std::nullopt);

private:
  const Context& m_context;
  Clock m_clock;
  std::string m_last_step;
  std::string m_last_text;
  std::chrono::steady_clock::time_point m_last_print{};
  bool m_line_open = false; ///< a terminal line is being overprinted
  /// Where the rate of the current byte step is measured from (a resumed download starts at
  /// its offset, so bytes already there do not count).
  std::string m_rate_step;
  std::chrono::steady_clock::time_point m_rate_since{};
  std::uint64_t m_rate_from = 0;
};

/// "1.5 GB" style size (decimal units, like Lume's and registries' progress).
std::string human_bytes(std::uint64_t bytes);

/// "45s", "3m05s", "2h07m": a time left, rounded up to the second.
std::string human_duration(double seconds);

} // namespace lume_unlock::cli
