#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace lume_unlock::report {

/// How far a measured figure may fall from the published one and still reproduce it: a tenth,
/// relative. The repetitions of one run already spread by several percent (the published
/// TinyLlama tg128 stock samples run from 8.64 to 12.79 t/s), and another Mac of the same chip,
/// another macOS build or another thermal state moves the figures further; a gap beyond a tenth
/// is a difference to look into, not noise.
inline constexpr double k_reproduce_tolerance = 0.10;

/// "reproduces" when `measured` is within k_reproduce_tolerance of `published` (relative to
/// the published figure), "below the published figure" under that, "above the published
/// figure" over it.
std::string published_verdict(double measured, double published);

/// report.json's bench.published_comparison, from a bench record (provenance's "bench") that
/// names a published run (its "published", verify::to_json of a PublishedRun); null when it
/// names none. {"source", "command", "statistic", "tolerance", "measured_command",
/// "command_matches", "rows"}: for each test whose kind the published run gives a figure for,
/// and each figure it gives ("speedup", "host_ratio"), one row from the medians of samples_ts
/// (the publisher's statistic) with the published figure and a verdict, then one from the
/// ratio of avg_ts (llama-bench's mean), shown for what it is and not judged. A row is
/// {"test", "figure", "statistic", "measured" (null when not measured), "published" (null on
/// the avg_ts row), "verdict"}; an unmeasured figure's verdict says why. Pure.
nlohmann::json compare_with_published(const nlohmann::json& bench);

/// The notes a reader needs beside the comparison: a bench that did not run the published
/// command, medians of fewer (or other) samples than the repetitions asked for. Empty when
/// there is nothing to say or no published run.
nlohmann::json published_comparison_notes(const nlohmann::json& bench);

} // namespace lume_unlock::report
