#include "progress_renderer.hpp"

#include "util/text_check.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

namespace lume_unlock::cli {

namespace {

constexpr int k_bar_width = 24;
/// A rate over less than this is noise (the first chunks of a transfer, a resumed offset).
constexpr auto k_rate_window = std::chrono::seconds(1);

std::string bar(std::uint64_t done, std::uint64_t total) {
  const int filled = total == 0 ? 0 : static_cast<int>((done * k_bar_width) / total);
  return "[" + std::string(static_cast<std::size_t>(filled), '#') +
         std::string(static_cast<std::size_t>(k_bar_width - filled), '.') + "]";
}

} // namespace

std::string human_bytes(std::uint64_t bytes) {
  static const char* const k_units[] = {"B", "kB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000.0 && unit < 4) {
    value /= 1000.0;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.1f %s", value, k_units[unit]);
  return buffer;
}

std::string human_duration(double seconds) {
  const auto total = static_cast<std::uint64_t>(std::ceil(std::max(seconds, 0.0)));
  char buffer[32];
  if (total < 60) {
    std::snprintf(buffer, sizeof buffer, "%llus", static_cast<unsigned long long>(total));
  } else if (total < 3600) {
    std::snprintf(buffer,
                  sizeof buffer,
                  "%llum%02llus",
                  static_cast<unsigned long long>(total / 60),
                  static_cast<unsigned long long>(total % 60));
  } else {
    std::snprintf(buffer,
                  sizeof buffer,
                  "%lluh%02llum",
                  static_cast<unsigned long long>(total / 3600),
                  static_cast<unsigned long long>((total % 3600) / 60));
  }
  return buffer;
}

std::string ProgressRenderer::format(const util::ProgressEvent& event,
                                     std::optional<double> bytes_per_second) {
  std::string text = event.step;
  if (event.done && event.total && *event.total > 0) {
    const std::uint64_t done = std::min(*event.done, *event.total);
    const auto percent = static_cast<int>((done * 100) / *event.total);
    char pct[8];
    std::snprintf(pct, sizeof pct, "%3d%%", percent);
    text += std::string("  ") + pct + " " + bar(done, *event.total);
    if (event.unit == "bytes") {
      text += " " + human_bytes(done) + " / " + human_bytes(*event.total);
    }
  } else if (event.done && event.unit == "bytes") {
    text += "  " + human_bytes(*event.done);
  }
  if (event.done && event.unit == "bytes" && bytes_per_second && *bytes_per_second >= 1.0) {
    text += "  " + human_bytes(static_cast<std::uint64_t>(*bytes_per_second)) + "/s";
    if (!event.finished && event.total && *event.total > *event.done) {
      text += "  ETA " +
              human_duration(static_cast<double>(*event.total - *event.done) / *bytes_per_second);
    }
  }
  if (!event.detail.empty()) {
    text += "  " + event.detail;
  }
  if (event.finished) {
    text += "  done";
  }
  // Steps and details may quote outside text (VM names, references, server messages).
  return util::display_text(text);
}

ProgressRenderer::ProgressRenderer(const Context& context, Clock clock)
    : m_context(context), m_clock(std::move(clock)) {}

ProgressRenderer::~ProgressRenderer() {
  if (m_line_open) {
    m_context.err << '\n';
  }
}

util::ProgressCallback ProgressRenderer::callback() {
  return [this](const util::ProgressEvent& event) { (*this)(event); };
}

void ProgressRenderer::operator()(const util::ProgressEvent& event) {
  if (m_context.quiet()) {
    return;
  }
  const auto now = m_clock();
  std::optional<double> rate;
  if (event.unit == "bytes" && event.done) {
    if (event.step != m_rate_step || *event.done < m_rate_from) {
      m_rate_step = event.step;
      m_rate_since = now;
      m_rate_from = *event.done;
    } else if (now - m_rate_since >= k_rate_window) {
      const std::chrono::duration<double> elapsed = now - m_rate_since;
      rate = static_cast<double>(*event.done - m_rate_from) / elapsed.count();
    }
  }
  const std::string text = format(event, rate);
  const bool new_step = event.step != m_last_step;
  if (text == m_last_text && !event.finished) {
    return;
  }
  const bool throttled =
      !new_step && !event.finished && now - m_last_print < std::chrono::seconds(1);

  if (m_context.json()) {
    if (throttled) {
      return;
    }
    nlohmann::json line = {{"step", event.step}, {"finished", event.finished}};
    if (event.done) {
      line["done"] = *event.done;
    }
    if (event.total) {
      line["total"] = *event.total;
    }
    if (!event.unit.empty()) {
      line["unit"] = event.unit;
    }
    if (!event.detail.empty()) {
      line["detail"] = event.detail;
    }
    m_context.err << nlohmann::json{{"progress", line}}.dump(
                         -1, ' ', false, nlohmann::json::error_handler_t::replace)
                  << '\n';
  } else if (m_context.err_is_terminal) {
    // Redraw in place; a new step keeps the previous one's last line on screen.
    if (m_line_open && new_step) {
      m_context.err << '\n';
    }
    m_context.err << "\r\033[2K" << text;
    m_line_open = !event.finished;
    if (event.finished) {
      m_context.err << '\n';
    }
    m_context.err.flush();
  } else {
    if (throttled) {
      return;
    }
    m_context.err << text << '\n';
  }
  m_last_step = event.step;
  m_last_text = text;
  m_last_print = now;
}

} // namespace lume_unlock::cli
