#include "report/report.hpp"
#include "util/encoding.hpp"
#include "verify/bench.hpp"
#include "verify/perplexity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <vector>

namespace lume_unlock::report {

namespace {

using verify::fixed_decimals;

constexpr const char* k_stock_colour = "#9aa0a6";
constexpr const char* k_unlocked_colour = "#1a73e8";
constexpr const char* k_host_colour = "#188038";
constexpr const char* k_below_colour = "#c5221f";

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

std::string text_of(const nlohmann::json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string()
             ? object[key].get<std::string>()
             : std::string();
}

std::optional<double> number_of(const nlohmann::json& object, const char* key) {
  if (object.is_object() && object.contains(key) && object[key].is_number()) {
    return object[key].get<double>();
  }
  return std::nullopt;
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

/// The comparison rows (report.json's bench.published_comparison) of `test` in the
/// publisher's statistic: what the panel sets beside its bars.
std::vector<nlohmann::json> published_rows(const nlohmann::json& bench,
                                           const nlohmann::json& test) {
  std::vector<nlohmann::json> out;
  if (!bench.contains("published_comparison") || !bench["published_comparison"].is_object()) {
    return out;
  }
  const auto& comparison = bench["published_comparison"];
  for (const auto& row : comparison.value("rows", nlohmann::json::array())) {
    if (row.value("test", std::string()) == text_of(test, "test") &&
        row.value("published", nlohmann::json()).is_number()) {
      out.push_back(row);
    }
  }
  return out;
}

/// "speedup 11.10x, published 11.08x: reproduces" in the colour of its verdict.
void published_line(std::ostringstream& svg, double x, double y, const nlohmann::json& row) {
  const bool host = row.value("figure", std::string()) == "host_ratio";
  const auto shown = [&](const nlohmann::json& value) {
    if (!value.is_number()) {
      return std::string("—");
    }
    // Two decimals, as the publisher gives them (98.25 %, 11.08x).
    return host ? fixed_decimals(value.get<double>() * 100, 2) + "%"
                : fixed_decimals(value.get<double>(), 2) + "x";
  };
  const std::string verdict = row.value("verdict", std::string());
  const char* colour = verdict == "reproduces"                   ? k_host_colour
                       : verdict == "below the published figure" ? k_below_colour
                       : verdict == "above the published figure" ? k_unlocked_colour
                                                                 : k_stock_colour;
  const bool measured = row.value("measured", nlohmann::json()).is_number();
  text(svg,
       x,
       y,
       std::string(host ? "of host " : "speedup ") +
           (measured ? shown(row["measured"]) : std::string("not measured")) + ", published " +
           shown(row["published"]) + (measured ? ": " + verdict : std::string()),
       12,
       "middle",
       "bold",
       colour);
}

/// One test's bars: stock, unlocked (with its speedup) and, when measured, the host.
std::vector<Bar> bars_of(const nlohmann::json& test) {
  std::vector<Bar> bars = {{"stock", k_stock_colour, number_of(test, "stock_ts").value_or(0), ""},
                           {"unlocked",
                            k_unlocked_colour,
                            number_of(test, "unlocked_ts").value_or(0),
                            number_of(test, "speedup")
                                ? fixed_decimals(*number_of(test, "speedup"), 1) + "x stock"
                                : ""}};
  if (const auto host = number_of(test, "host_ts")) {
    bars.push_back({"host",
                    k_host_colour,
                    *host,
                    number_of(test, "host_ratio")
                        ? "unlocked at\n" +
                              fixed_decimals(*number_of(test, "host_ratio") * 100, 1) + "% of host"
                        : ""});
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
    text(svg,
         x + bar_width / 2,
         y - 38,
         bar.note.substr(0, newline),
         13,
         "middle",
         "bold",
         bar.colour);
  }
  if (!bar.note.empty()) {
    text(svg,
         x + bar_width / 2,
         y - 22,
         two_lines ? bar.note.substr(newline + 1) : bar.note,
         13,
         "middle",
         "bold",
         bar.colour);
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

  text(svg,
       left + width / 2,
       top + 16,
       text_of(test, "test") + " (" + text_of(test, "kind") + ")",
       16,
       "middle",
       "bold");
  for (std::size_t i = 0; i < published.size(); ++i) {
    published_line(svg, left + width / 2, top + 34 + 16 * static_cast<double>(i), published[i]);
  }
  // Grid lines and tick labels.
  for (double tick = 0; tick <= axis_max + step / 2; tick += step) {
    const double y = bottom - tick / axis_max * plot_height;
    svg << "<line x1=\"" << fixed_decimals(plot_left, 1) << "\" y1=\"" << fixed_decimals(y, 1)
        << "\" x2=\"" << fixed_decimals(plot_left + plot_width, 1) << "\" y2=\""
        << fixed_decimals(y, 1) << "\" stroke=\"#dadce0\" stroke-width=\"1\"/>\n";
    text(svg, plot_left - 6, y + 4, fixed_decimals(tick, step < 1 ? 1 : 0), 12, "end");
  }
  svg << "<line x1=\"" << fixed_decimals(plot_left, 1) << "\" y1=\"" << fixed_decimals(plot_top, 1)
      << "\" x2=\"" << fixed_decimals(plot_left, 1) << "\" y2=\"" << fixed_decimals(bottom, 1)
      << "\" stroke=\"#5f6368\" stroke-width=\"1.5\"/>\n";
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
  svg << "<line x1=\"" << fixed_decimals(plot_left, 1) << "\" y1=\"" << fixed_decimals(bottom, 1)
      << "\" x2=\"" << fixed_decimals(plot_left + plot_width, 1) << "\" y2=\""
      << fixed_decimals(bottom, 1) << "\" stroke=\"#5f6368\" stroke-width=\"1.5\"/>\n";
}

/// "unlocked 11.1x (pp512), 16.4x (tg128) faster, perplexity 9.873 vs 9.869 on CPU": fast, and
/// whether it is correct, in one line.
std::string caption_of(const nlohmann::json& bench) {
  std::string speedups;
  for (const auto& test : bench["tests"]) {
    if (const auto speedup = number_of(test, "speedup")) {
      speedups += (speedups.empty() ? "" : ", ") + fixed_decimals(*speedup, 1) + "x (" +
                  text_of(test, "test") + ")";
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
  const std::string vm = text_of(report, "vm");
  const std::string label = text_of(report, "label");
  const bool ran = bench.is_object() && bench.value("ran", false) && bench.contains("tests") &&
                   bench["tests"].is_array() && !bench["tests"].empty();
  if (!ran) {
    text(svg,
         k_chart_width / 2.0,
         40,
         "llama-bench in VM '" + vm + "': no bench run",
         22,
         "middle",
         "bold");
    text(svg, k_chart_width / 2.0, 80, text_of(bench, "why"), 14);
    svg << "</svg>\n";
    return svg.str();
  }
  std::string model = text_of(bench, "model_type");
  if (model.empty()) {
    model = text_of(bench, "model");
  }
  text(svg,
       k_chart_width / 2.0,
       32,
       "llama-bench tokens/s in VM '" + vm + "': stock, unlocked" +
           (bench.contains("host_source") ? ", host" : "") + " — " + model,
       20,
       "middle",
       "bold");
  std::string subtitle = "guest GPU " + (text_of(bench, "gpu").empty() ? std::string("unknown")
                                                                       : text_of(bench, "gpu"));
  if (!text_of(bench, "host_chip").empty()) {
    subtitle += ", host " + text_of(bench, "host_chip");
  }
  if (!text_of(bench, "build_commit").empty()) {
    subtitle += ", llama.cpp " + text_of(bench, "build_commit");
  }
  subtitle += ", measured " + text_of(bench, "measured_at");
  text(svg, k_chart_width / 2.0, 56, subtitle, 13, "middle", "normal", "#5f6368");
  text(svg, k_chart_width / 2.0, 74, caption_of(bench), 13, "middle", "bold");
  if (!label.empty()) {
    text(svg, k_chart_width / 2.0, 90, label, 13, "middle", "bold", "#b06000");
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
