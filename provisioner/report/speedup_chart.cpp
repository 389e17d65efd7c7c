#include "report/report.hpp"
#include "util/encoding.hpp"
#include "verify/bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <vector>

namespace lume_unlock::report {

namespace {

using verify::fixed_decimals;

/// The chart's fixed size in CSS pixels.
constexpr int k_chart_width = 960;
constexpr int k_chart_height = 540;

constexpr const char* k_stock_colour = "#9aa0a6";
constexpr const char* k_unlocked_colour = "#1a73e8";
constexpr const char* k_host_colour = "#188038";
constexpr const char* k_below_colour = "#c5221f";
constexpr const char* k_grid = "stroke=\"#dadce0\" stroke-width=\"1\"";
constexpr const char* k_axis = "stroke=\"#5f6368\" stroke-width=\"1.5\"";

/// 1, 2 or 5 times a power of ten, at least `raw`: tick steps people read at a glance.
double nice_step(double raw) {
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) {
      return m * power;
    }
  }
  return 10 * power;
}

struct Bar {
  const char* label;
  const char* colour;
  double value;
  std::string note; ///< drawn above the bar: "10.0x", "97.7% of host"
};

void text(std::ostringstream& svg,
          double x,
          double y,
          const std::string& content,
          int size,
          const char* anchor = "middle",
          const char* weight = "normal",
          const char* colour = "#202124") {
  svg << "<text x=\"" << fixed_decimals(x, 1) << "\" y=\"" << fixed_decimals(y, 1)
      << "\" font-size=\"" << size << "\" text-anchor=\"" << anchor << "\" font-weight=\"" << weight
      << "\" fill=\"" << colour << "\">" << util::xml_escape(content) << "</text>\n";
}

/// Bold text centred on `x`.
void bold(std::ostringstream& svg,
          double x,
          double y,
          const std::string& content,
          int size,
          const char* colour = "#202124") {
  text(svg, x, y, content, size, "middle", "bold", colour);
}

void line(std::ostringstream& svg, double x1, double y1, double x2, double y2, const char* style) {
  svg << "<line x1=\"" << fixed_decimals(x1, 1) << "\" y1=\"" << fixed_decimals(y1, 1) << "\" x2=\""
      << fixed_decimals(x2, 1) << "\" y2=\"" << fixed_decimals(y2, 1) << "\" " << style << "/>\n";
}

/// The comparison rows (report.json's bench.published_comparison) of `test` in the
/// publisher's statistic: what the panel sets beside its bars.
std::vector<nlohmann::json> published_rows(const nlohmann::json& bench,
                                           const nlohmann::json& test) {
  std::vector<nlohmann::json> out;
  const auto& rows = member(member(bench, "published_comparison"), "rows");
  for (const auto& row : rows.is_array() ? rows : nlohmann::json::array()) {
    if (text_at(row, "test") == text_at(test, "test") && number_at(row, "published")) {
      out.push_back(row);
    }
  }
  return out;
}

/// "speedup 11.10x, published 11.08x: reproduces" in the colour of its verdict.
void published_line(std::ostringstream& svg, double x, double y, const nlohmann::json& row) {
  const bool host = text_at(row, "figure") == "host_ratio";
  const std::string verdict = text_at(row, "verdict");
  const char* colour = verdict == "reproduces"                   ? k_host_colour
                       : verdict == "below the published figure" ? k_below_colour
                       : verdict == "above the published figure" ? k_unlocked_colour
                                                                 : k_stock_colour;
  // Two decimals, as the publisher gives them (98.25 %, 11.08x).
  const bool measured = number_at(row, "measured").has_value();
  bold(svg,
       x,
       y,
       std::string(host ? "of host " : "speedup ") +
           (measured ? figure_text(row["measured"], host, 2) : std::string("not measured")) +
           ", published " + figure_text(row["published"], host, 2) +
           (measured ? ": " + verdict : std::string()),
       12,
       colour);
}

/// One test's bars: stock, unlocked (with its speedup) and, when measured, the host.
std::vector<Bar> bars_of(const nlohmann::json& test) {
  std::vector<Bar> bars = {{"stock", k_stock_colour, number_at(test, "stock_ts").value_or(0), ""},
                           {"unlocked",
                            k_unlocked_colour,
                            number_at(test, "unlocked_ts").value_or(0),
                            number_at(test, "speedup")
                                ? fixed_decimals(*number_at(test, "speedup"), 1) + "x stock"
                                : ""}};
  if (const auto host = number_at(test, "host_ts")) {
    const auto& ratio = member(test, "host_ratio");
    const std::string note =
        ratio.is_number() ? "unlocked at\n" + figure_text(ratio, true, 1) + " of host" : "";
    bars.push_back({"host", k_host_colour, *host, note});
  }
  return bars;
}

/// One bar with its value above it, its note (one or two lines) and its label below the axis.
void draw_bar(std::ostringstream& svg,
              const Bar& bar,
              double x,
              double y,
              double bar_width,
              double bar_height,
              double bottom) {
  svg << "<rect x=\"" << fixed_decimals(x, 1) << "\" y=\"" << fixed_decimals(y, 1) << "\" width=\""
      << fixed_decimals(bar_width, 1) << "\" height=\"" << fixed_decimals(bar_height, 1)
      << "\" fill=\"" << bar.colour << "\"/>\n";
  text(svg, x + bar_width / 2, y - 6, fixed_decimals(bar.value, 2), 12);
  // A note of two lines ("unlocked at\n97.7% of host") stays within its bar's slot.
  const auto newline = bar.note.find('\n');
  const bool two_lines = newline != std::string::npos;
  if (two_lines) {
    bold(svg, x + bar_width / 2, y - 38, bar.note.substr(0, newline), 13, bar.colour);
  }
  if (!bar.note.empty()) {
    const std::string last = two_lines ? bar.note.substr(newline + 1) : bar.note;
    bold(svg, x + bar_width / 2, y - 22, last, 13, bar.colour);
  }
  text(svg, x + bar_width / 2, bottom + 18, bar.label, 13);
}

void panel(std::ostringstream& svg,
           const nlohmann::json& test,
           const std::vector<nlohmann::json>& published,
           double left,
           double top,
           double width,
           double height) {
  const std::vector<Bar> bars = bars_of(test);
  double highest = 0;
  for (const auto& bar : bars) {
    highest = std::max(highest, bar.value);
  }
  const double step = nice_step(highest > 0 ? highest / 5 : 1);
  const double axis_max = step * std::ceil((highest > 0 ? highest * 1.15 : 1) / step);
  const double plot_left = left + 64;
  const double plot_width = width - 76;
  // Each published figure takes a line under the panel's title.
  const double lines = 16 * static_cast<double>(published.size());
  const double plot_top = top + 34 + lines;
  const double plot_height = height - 34 - lines - 40;
  const double bottom = plot_top + plot_height;

  bold(svg,
       left + width / 2,
       top + 16,
       text_at(test, "test") + " (" + text_at(test, "kind") + ")",
       16);
  for (std::size_t i = 0; i < published.size(); ++i) {
    published_line(svg, left + width / 2, top + 34 + 16 * static_cast<double>(i), published[i]);
  }
  // Grid lines and tick labels.
  for (double tick = 0; tick <= axis_max + step / 2; tick += step) {
    const double y = bottom - tick / axis_max * plot_height;
    line(svg, plot_left, y, plot_left + plot_width, y, k_grid);
    text(svg, plot_left - 6, y + 4, fixed_decimals(tick, step < 1 ? 1 : 0), 12, "end");
  }
  line(svg, plot_left, plot_top, plot_left, bottom, k_axis);
  svg << "<text transform=\"translate(" << fixed_decimals(left + 14, 1) << ","
      << fixed_decimals(plot_top + plot_height / 2, 1)
      << ") rotate(-90)\" font-size=\"13\" text-anchor=\"middle\" fill=\"#202124\">tokens/s"
      << "</text>\n";

  const double slot = plot_width / static_cast<double>(bars.size());
  const double bar_width = std::min(90.0, slot * 0.6);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& bar = bars[i];
    const double bar_height = bar.value / axis_max * plot_height;
    const double x = plot_left + slot * static_cast<double>(i) + (slot - bar_width) / 2;
    draw_bar(svg, bar, x, bottom - bar_height, bar_width, bar_height, bottom);
  }
  line(svg, plot_left, bottom, plot_left + plot_width, bottom, k_axis);
}

/// "unlocked 11.1x (pp512), 16.4x (tg128) faster, perplexity 9.873 vs 9.869 on CPU": fast, and
/// whether it is correct, in one line.
std::string caption_of(const nlohmann::json& bench) {
  std::string speedups;
  for (const auto& test : bench["tests"]) {
    if (const auto speedup = number_at(test, "speedup")) {
      speedups += (speedups.empty() ? "" : ", ") + fixed_decimals(*speedup, 1) + "x (" +
                  text_at(test, "test") + ")";
    }
  }
  std::string out = speedups.empty() ? "" : "unlocked " + speedups + " faster";
  const std::string perplexity =
      verify::perplexity_phrase(bench.value("perplexity", nlohmann::json()));
  return out + (out.empty() ? "" : ", ") +
         (perplexity.empty() ? std::string("perplexity not measured") : perplexity);
}

} // namespace

std::string render_speedup_chart(const nlohmann::json& report) {
  const nlohmann::json bench = report.value("bench", nlohmann::json::object());
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << k_chart_width << "\" height=\""
      << k_chart_height << "\" viewBox=\"0 0 " << k_chart_width << " " << k_chart_height
      << "\" font-family=\"Helvetica, Arial, sans-serif\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  const std::string vm = text_at(report, "vm");
  const std::string label = text_at(report, "label");
  const bool ran = bench.is_object() && bench.value("ran", false) && bench.contains("tests") &&
                   bench["tests"].is_array() && !bench["tests"].empty();
  if (!ran) {
    bold(svg, k_chart_width / 2.0, 40, "llama-bench in VM '" + vm + "': no bench run", 22);
    text(svg, k_chart_width / 2.0, 80, text_at(bench, "why"), 14);
    svg << "</svg>\n";
    return svg.str();
  }
  std::string model = text_at(bench, "model_type");
  if (model.empty()) {
    model = text_at(bench, "model");
  }
  bold(svg,
       k_chart_width / 2.0,
       32,
       "llama-bench tokens/s in VM '" + vm + "': stock, unlocked" +
           (bench.contains("host_source") ? ", host" : "") + " — " + model,
       20);
  std::string subtitle = "guest GPU " + (text_at(bench, "gpu").empty() ? std::string("unknown")
                                                                       : text_at(bench, "gpu"));
  if (!text_at(bench, "host_chip").empty()) {
    subtitle += ", host " + text_at(bench, "host_chip");
  }
  if (!text_at(bench, "build_commit").empty()) {
    subtitle += ", llama.cpp " + text_at(bench, "build_commit");
  }
  subtitle += ", measured " + text_at(bench, "measured_at");
  text(svg, k_chart_width / 2.0, 56, subtitle, 13, "middle", "normal", "#5f6368");
  bold(svg, k_chart_width / 2.0, 74, caption_of(bench), 13);
  if (!label.empty()) {
    bold(svg, k_chart_width / 2.0, 90, label, 13, "#b06000");
  }

  const auto& tests = bench["tests"];
  const double top = label.empty() ? 96 : 104;
  const double height = k_chart_height - top - 44;
  const double width = (k_chart_width - 40.0) / static_cast<double>(tests.size());
  for (std::size_t i = 0; i < tests.size(); ++i) {
    panel(svg,
          tests[i],
          published_rows(bench, tests[i]),
          20 + width * static_cast<double>(i),
          top,
          width,
          height);
  }
  // Legend.
  double x = k_chart_width / 2.0 - 230;
  const double y = k_chart_height - 20;
  for (const auto& [name, colour] :
       {std::pair<const char*, const char*>{"stock (no shim)", k_stock_colour},
        {"unlocked (shim)", k_unlocked_colour},
        {"host (the Mac)", k_host_colour}}) {
    svg << "<rect x=\"" << fixed_decimals(x, 1) << "\" y=\"" << fixed_decimals(y - 11, 1)
        << "\" width=\"14\" height=\"14\" fill=\"" << colour << "\"/>\n";
    text(svg, x + 20, y + 1, name, 13, "start");
    x += 160;
  }
  svg << "</svg>\n";
  return svg.str();
}

} // namespace lume_unlock::report
