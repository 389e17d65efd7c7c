#pragma once

#include "cli/context.hpp"
#include "util/progress.hpp"

#include <chrono>
#include <functional>
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

  /// The text of one event ("pull  42% [########..........] 4.2 GB / 10.0 GB  detail").
  static std::string format(const util::ProgressEvent& event);

private:
  const Context& m_context;
  Clock m_clock;
  std::string m_last_step;
  std::string m_last_text;
  std::chrono::steady_clock::time_point m_last_print{};
  bool m_line_open = false; ///< a terminal line is being overprinted
};

/// "1.5 GB" style size (decimal units, like Lume's and registries' progress).
std::string human_bytes(std::uint64_t bytes);

} // namespace lume_unlock::cli
