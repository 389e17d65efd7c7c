#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace lume_unlock::report {

/// The chart's fixed size in CSS pixels (its width and height attributes).
inline constexpr int k_chart_width = 960;
inline constexpr int k_chart_height = 540;

/// speedup.svg from a report.json (build_report): one panel per test (pp512, tg128, …) of the
/// bench's model, each with its own tokens/s axis, bars for stock, unlocked and host (when
/// measured) with their figures, the speedup over the unlocked bar and the share of host over
/// the host bar; under each panel's title, when the bench names a published run, one line per
/// published figure (median-based speedup and share of host: measured, published, verdict, in
/// the verdict's colour); a legend, and a title naming the model, the guest GPU, the llama.cpp
/// build and the report's label. Without a bench it draws one line saying so. Every number drawn is
/// read from the report. Pure text, no plotting library.
std::string render_speedup_chart(const nlohmann::json& report);

} // namespace lume_unlock::report
