#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace lume_unlock::report {

/// report.md from a report.json (build_report), in the order a reader asks: what was measured,
/// how fast (the figures, speedups and shares of host, the chart), on what (host, guest, Lume
/// settings, image, shim, probe, enablement, artifacts), how to reproduce and re-check, and the
/// raw inputs with their sha256. Every figure is read from the report. Pure.
std::string render_report_markdown(const nlohmann::json& report);

} // namespace lume_unlock::report
