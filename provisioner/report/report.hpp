#pragma once

#include "lume/types.hpp"
#include "provenance/provenance.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lume_unlock::report {

/// What the Mac that runs the VM says about itself. Read on macOS only (sw_vers, sysctl,
/// system_profiler); elsewhere `mac` is false and every fact is absent.
struct HostFacts {
  bool mac = false;
  std::optional<std::string> macos_version; ///< `sw_vers -productVersion`
  std::optional<std::string> macos_build;   ///< `sw_vers -buildVersion`
  std::optional<std::string> chip;          ///< `sysctl -n machdep.cpu.brand_string`
  std::optional<std::int64_t> gpu_cores;    ///< system_profiler's sppci_cores
};

/// The GPU core count in `system_profiler SPDisplaysDataType -json` output: the first display
/// adapter's "sppci_cores" (a string of digits there). Absent when the text is not that JSON
/// or names no count.
std::optional<std::int64_t> gpu_cores_from_system_profiler(std::string_view json_text);

/// A command's output trimmed; absent when empty.
std::optional<std::string> trimmed_fact(std::string_view output);

/// Absent facts omitted.
nlohmann::json to_json(const HostFacts& facts);

/// Reading a report back, leniently (its bench is a record read from disk): `object[key]` when
/// `object` is an object holding it, else null; the number or string there, else nothing / "".
const nlohmann::json& member(const nlohmann::json& object, const char* key);
std::optional<double> number_at(const nlohmann::json& object, const char* key);
std::string text_at(const nlohmann::json& object, const char* key);
/// A figure as report.md and the chart write it: "11.08x", or for a `share` of host "98.25%";
/// "—" when `value` is not a number.
std::string figure_text(const nlohmann::json& value, bool share, int decimals);

inline constexpr const char* k_report_schema = "lume-unlock/report/v1";

/// One file a report drew from, copied verbatim into the report folder.
struct RawInput {
  std::string name;   ///< the file name in the report folder: "provenance.json", "bench/stock.json"
  std::string source; ///< where it was read: the host path
  std::string bytes;
};

/// Everything a report is built from. Nothing else: every figure in it comes from these.
struct ReportInputs {
  provenance::Provenance record;
  /// GET /lume/vms/NAME; absent when Lume did not answer, with `lume_problem` saying why.
  std::optional<lume::VmDetails> lume_vm;
  std::optional<std::string> lume_problem;
  HostFacts host;
  std::vector<RawInput> raw;
  std::string generated_at; ///< RFC 3339
  std::string tool_version;
  /// What the run was, in the user's words ("stand-in run (lume-sim, guest-sim, emulated
  /// GPU)"): shown in report.md and the chart's title.
  std::optional<std::string> label;
};

/// report.json (schema k_report_schema, report.schema.json): vm, generated_at, tool, label, host
/// (this Mac's facts, and the host chip llama-bench named when a host run was given), guest, lume
/// (cpu, memory_bytes, disk_bytes and where they came from), image, shim (bundle and files),
/// profile, probe (both answers, each family stock vs unlocked, threadgroup memory), enablement,
/// artifacts, recipe, bench ({"ran": false, "why"} without one; else the record's figures, and
/// published_comparison, compare_with_published, when the bench names a published run),
/// raw_inputs (name, source, sha256, size of each copied file) and notes. Pure.
nlohmann::json build_report(const ReportInputs& inputs);

/// Every family code the two probe answers name, with each side's answer:
/// [{"family": "1009", "stock": false, "unlocked": true}, …] in the probe's order.
nlohmann::json compare_probe_families(const nlohmann::json& stock, const nlohmann::json& unlocked);

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

/// What `report --check` read of the VM now: the image digest of its host record, guest path →
/// sha256 (absent: missing) and lume-unlock-probe --json run again.
struct ObservedVm {
  std::optional<std::string> image_digest;
  std::map<std::string, std::string> file_sha256;
  nlohmann::json probe_stock;
  nlohmann::json probe_unlocked;
};

/// One fact of the report compared with the VM now.
struct CheckItem {
  std::string item;     ///< "image digest", "shim file <path>", "artifact file <path>", …
  std::string expected; ///< what the report says
  std::string found;    ///< what the VM holds now ("missing" when absent)
  bool ok() const { return expected == found; }
};

/// The report.json of a report folder, checked to be one (schema, vm, image, probe, shim and
/// artifact files) with util/json_reader. Fails (category verification) naming `source`.
Result<nlohmann::json> parse_report(const std::string& text, const std::string& source);

/// Every guest file whose sha256 the report holds: the shim files, then the artifacts' files.
std::vector<std::string> report_guest_files(const nlohmann::json& report);

/// The report's image digest, each shim and artifact file's sha256, and the probe's answers
/// (each family and the threadgroup memory, stock and unlocked) against `now`, in that order.
std::vector<CheckItem> compare_report(const nlohmann::json& report, const ObservedVm& now);

/// report.md from a report.json (build_report), in the order a reader asks: what was measured,
/// how fast (the figures, speedups and shares of host, the chart), on what (host, guest, Lume
/// settings, image, shim, probe, enablement, artifacts), how to reproduce and re-check, and the
/// raw inputs with their sha256. Every figure is read from the report. Pure.
std::string render_report_markdown(const nlohmann::json& report);

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
