#pragma once

#include "guest/session.hpp"
#include "lume/client.hpp"
#include "report/report.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// What `lume-unlock report NAME` reports on.
struct ReportOptions {
  std::string vm;
  std::string state_dir; ///< the records live in <state_dir>/vms/<vm>/
  std::string tool_version;
  std::optional<std::string> label; ///< --label: what the run was, in the user's words
};

/// "./lume-unlock-report-<vm>": where a report goes without --out.
std::string default_report_dir(const std::string& vm);

/// The files one report folder holds: report.json, report.md, speedup.svg and the raw inputs.
struct ReportFolder {
  nlohmann::json report;
  std::string markdown;
  std::string chart;
  std::vector<report::RawInput> raw;
};

/// What `report --dry-run` says it would read, one line each: the host record, the bench's
/// outputs it names, Lume's view of the VM, and this host's facts (or that it is not a Mac).
/// Fails (usage) for a VM name provenance_path refuses.
Result<std::vector<std::string>> report_sources(const ReportOptions& options);

/// Builds the report folder of `options.vm` and writes it to `dir`. The folder: the host
/// provenance record (category usage naming the VM when there is none), GET /lume/vms/NAME (a
/// Lume that does not answer is noted, the settings then come from the record), this Mac's facts
/// and the raw inputs: provenance.json and every bench output the record's bench.raw names,
/// checked against the sha256 recorded (category verification naming the file when missing or
/// changed). Written atomically: into a temporary directory beside `dir`, then renamed into
/// place; an existing report folder is replaced only then. Fails (usage) when `dir` exists and
/// holds no report.json (nothing else is ever overwritten).
Result<ReportFolder>
write_vm_report(const ReportOptions& options, lume::LumeApi& lume, const std::string& dir);

/// Where `bake` writes the baked VM's report: beside the recipe's lock file, "<recipe without
/// its extension>.report" ("image-recipes/tahoe-llm.report" for tahoe-llm.yaml).
std::string report_dir_for_recipe(const std::string& recipe_path);

/// Reads `<dir>/report.json` (report::parse_report).
Result<nlohmann::json> read_report(const std::string& dir);

/// `report --check`: the VM now against `report` — its image digest (the host record of `vm`),
/// every shim and artifact file (one `shasum`), and the probe run again stock and unlocked with
/// the report's profile (3 more commands: facts, observe, probe).
Result<std::vector<report::CheckItem>> check_report(guest::GuestSession& session,
                                                    const nlohmann::json& report,
                                                    const std::string& state_dir,
                                                    const std::string& vm);

} // namespace lume_unlock::pipeline
