#pragma once

#include "lume/types.hpp"
#include "provenance/provenance.hpp"
#include "report/host_facts.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::report {

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

} // namespace lume_unlock::report
