#include "pipeline/report.hpp"

#include "apply/enablement_apply.hpp"
#include "apply/probe.hpp"
#include "guest/guest_records.hpp"
#include "pipeline/bench.hpp"
#include "provenance/provenance.hpp"
#include "recipe/recipe.hpp"
#include "report/report.hpp"
#include "util/atomic_file.hpp"
#include "util/child_process.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"
#include "verify/bench.hpp"

#include <filesystem>
#include <system_error>

namespace lume_unlock::pipeline {

namespace {

namespace fs = std::filesystem;

constexpr const char* k_report_file = "report.json";

/// The bench outputs the record names (bench.raw), in k_bench_raw_names order.
std::vector<std::pair<std::string, std::string>>
recorded_raw(const provenance::Provenance& record) {
  std::vector<std::pair<std::string, std::string>> out;
  const nlohmann::json bench = record.bench.value_or(nullptr);
  for (const char* name : k_bench_raw_names) {
    const auto& raw = report::member(report::member(bench, "raw"), name);
    if (!report::text_at(raw, "sha256").empty()) {
      out.emplace_back(name, raw["sha256"].get<std::string>());
    }
  }
  return out;
}

report::HostFacts read_host_facts() {
  report::HostFacts facts;
#ifdef __APPLE__
  facts.mac = true;
  // Fixed host commands, no user input in them; a command that fails leaves its fact out.
  const auto output = [](std::vector<std::string> argv) -> std::optional<std::string> {
    auto ran = util::run_child(argv);
    return ran.ok() && ran.value().exit_status == 0 ? std::optional(ran.value().stdout_text)
                                                    : std::nullopt;
  };
  const auto fact = [&](std::vector<std::string> argv) -> std::optional<std::string> {
    auto out = output(std::move(argv));
    return out ? report::trimmed_fact(*out) : std::nullopt;
  };
  facts.macos_version = fact({"/usr/bin/sw_vers", "-productVersion"});
  facts.macos_build = fact({"/usr/bin/sw_vers", "-buildVersion"});
  facts.chip = fact({"/usr/sbin/sysctl", "-n", "machdep.cpu.brand_string"});
  if (auto out = output({"/usr/sbin/system_profiler", "SPDisplaysDataType", "-json"})) {
    facts.gpu_cores = report::gpu_cores_from_system_profiler(*out);
  }
#endif
  return facts;
}

Result<ReportFolder> build_report_folder(const ReportOptions& options,
                                         lume::LumeApi& lume,
                                         const report::HostFacts& host) {
  const std::string what = "report of VM " + util::quote_for_message(options.vm);
  LUME_UNLOCK_TRY_ASSIGN(auto record_path,
                         provenance::provenance_path(options.state_dir, options.vm));
  auto record = provenance::read_provenance(options.state_dir, options.vm);
  if (!record.ok()) {
    return Error(ErrorCategory::usage,
                 what,
                 "lume-unlock has no record of it (" + record.error().why() + ")",
                 "provision it with 'lume-unlock create " + options.vm + " --recipe FILE'");
  }
  report::ReportInputs inputs;
  inputs.record = record.value();
  inputs.host = host;
  inputs.generated_at = provenance::rfc3339_now();
  inputs.tool_version = options.tool_version;
  inputs.label = options.label;
  auto state = lume.get(lume::VmRef{options.vm});
  if (state.ok() && std::holds_alternative<lume::VmDetails>(state.value())) {
    inputs.lume_vm = std::get<lume::VmDetails>(state.value());
  } else {
    inputs.lume_problem = state.ok() ? "the VM is still being pulled" : state.error().message();
  }

  // The record exactly as it is on disk: the probe's answers and everything else are in it.
  LUME_UNLOCK_TRY_ASSIGN(
      auto record_bytes,
      util::read_input_file(record_path, provenance::k_max_provenance_bytes, "the record"));
  inputs.raw.push_back({"provenance.json", record_path, record_bytes});
  LUME_UNLOCK_TRY_ASSIGN(auto bench_dir, bench_raw_dir(options.state_dir, options.vm));
  for (const auto& [name, sha256] : recorded_raw(inputs.record)) {
    const std::string path = bench_dir + "/" + name;
    auto bytes = util::read_input_file(path, verify::k_max_llama_bench_bytes, "a bench output");
    const std::string found = bytes.ok() ? util::sha256_hex(bytes.value()) : "";
    if (found != sha256) {
      return Error(ErrorCategory::verification,
                   what,
                   "the bench output '" + path + "' " +
                       (bytes.ok() ? "changed since the bench: its sha256 is " + found +
                                         ", the record says " + sha256
                                   : "its record names is gone (" + bytes.error().why() + ")"),
                   "run 'lume-unlock bench " + options.vm +
                       " --model PATH' again to measure and keep its outputs anew");
    }
    inputs.raw.push_back({"bench/" + name, path, bytes.value()});
  }
  ReportFolder folder;
  folder.report = report::build_report(inputs);
  if (inputs.record.bench && recorded_raw(inputs.record).empty()) {
    folder.report["notes"].push_back("the bench record predates kept outputs: its llama-bench "
                                     "JSON is not in this folder; run the bench again to keep it");
  }
  folder.markdown = report::render_report_markdown(folder.report);
  folder.chart = report::render_speedup_chart(folder.report);
  folder.raw = std::move(inputs.raw);
  return folder;
}

Status write_report_folder(const std::string& dir, const ReportFolder& folder) {
  const fs::path target = fs::path(dir).lexically_normal();
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code error;
  if (fs::exists(target, error) && !fs::exists(target / k_report_file, error)) {
    return Error(ErrorCategory::usage,
                 "report folder '" + dir + "'",
                 "it exists and is not a report folder (it has no report.json)",
                 "choose another --out DIR, or remove it");
  }
  LUME_UNLOCK_TRY(util::make_directories(parent.string()));
  const std::string suffix = util::random_hex(12);
  const fs::path staging = parent / ("." + target.filename().string() + ".tmp-" + suffix);
  const auto fail = [&](const std::string& why) {
    fs::remove_all(staging, error);
    return Error(ErrorCategory::failure,
                 "writing the report folder '" + dir + "'",
                 why,
                 "check that its directory is writable and run the report again");
  };
  LUME_UNLOCK_TRY(util::make_directories((staging / "bench").string()));
  std::vector<std::pair<std::string, std::string>> files = {
      {k_report_file, folder.report.dump(2) + "\n"},
      {"report.md", folder.markdown},
      {"speedup.svg", folder.chart}};
  for (const auto& input : folder.raw) {
    files.emplace_back(input.name, input.bytes);
  }
  for (const auto& [name, bytes] : files) {
    if (auto written = util::write_file_atomic((staging / name).string(), bytes); !written.ok()) {
      return fail(written.error().why());
    }
  }
  // The previous report is moved aside, not removed, until the new one is in place.
  if (auto placed = util::replace_directory(staging.string(), target.string()); !placed.ok()) {
    return fail(placed.error().why());
  }
  return ok_status();
}

} // namespace

std::string default_report_dir(const std::string& vm) {
  return "./lume-unlock-report-" + vm;
}

Result<std::vector<std::string>> report_sources(const ReportOptions& options) {
  std::vector<std::string> out;
  LUME_UNLOCK_TRY_ASSIGN(auto path, provenance::provenance_path(options.state_dir, options.vm));
  LUME_UNLOCK_TRY_ASSIGN(auto dir, bench_raw_dir(options.state_dir, options.vm));
  out.push_back("the host record " + path);
  auto record = provenance::read_provenance(options.state_dir, options.vm);
  if (record.ok()) {
    const auto raw = recorded_raw(record.value());
    for (const auto& [name, sha256] : raw) {
      out.push_back("the bench output " + dir + "/" + name + " (sha256 " + sha256 + ")");
    }
    if (!record.value().bench) {
      out.push_back("no bench run is recorded: the report will say so");
    }
  }
  out.push_back("Lume's view of the VM: GET /lume/vms/" + options.vm);
#ifdef __APPLE__
  out.push_back("this Mac: sw_vers, sysctl -n machdep.cpu.brand_string, system_profiler "
                "SPDisplaysDataType -json");
#else
  out.push_back("this host is not a Mac: no macOS version, chip or GPU cores");
#endif
  return out;
}

Result<ReportFolder>
write_vm_report(const ReportOptions& options, lume::LumeApi& lume, const std::string& dir) {
  LUME_UNLOCK_TRY_ASSIGN(auto folder, build_report_folder(options, lume, read_host_facts()));
  LUME_UNLOCK_TRY(write_report_folder(dir, folder));
  return folder;
}

std::string report_dir_for_recipe(const std::string& recipe_path) {
  const std::string lock = recipe::lock_path_for(recipe_path);
  return lock.substr(0, lock.size() - std::string(".lock.json").size()) + ".report";
}

Result<nlohmann::json> read_report(const std::string& dir) {
  const std::string path = dir + "/" + k_report_file;
  auto text = util::read_input_file(path, provenance::k_max_provenance_bytes * 2, "the report");
  if (!text.ok()) {
    return Error(ErrorCategory::usage,
                 "report --check " + util::quote_for_message(dir),
                 text.error().why(),
                 "pass the folder 'lume-unlock report NAME --out DIR' wrote");
  }
  return report::parse_report(text.value(), util::quote_for_message(path));
}

Result<std::vector<report::CheckItem>> check_report(guest::GuestSession& session,
                                                    const nlohmann::json& report,
                                                    const std::string& state_dir,
                                                    const std::string& vm) {
  report::ObservedVm now;
  auto record = provenance::read_provenance(state_dir, vm);
  if (record.ok() && record.value().image) {
    now.image_digest = record.value().image->digest;
  }
  LUME_UNLOCK_TRY_ASSIGN(now.file_sha256,
                         guest::hash_guest_files(session, report::report_guest_files(report)));

  enablement::Profile profile = enablement::Profile::standard();
  for (auto [key, limit] : {std::pair{"apple_family_max", &profile.apple_family_max},
                            std::pair{"max_threadgroup_memory", &profile.max_threadgroup_memory}}) {
    const auto& recorded = report::member(report::member(report, "profile"), key);
    *limit = recorded.is_number_unsigned() ? recorded.get<std::uint64_t>() : *limit;
  }
  LUME_UNLOCK_TRY_ASSIGN(auto facts, guest::gather_guest_facts(session));
  LUME_UNLOCK_TRY_ASSIGN(auto observed, apply::observe_enablement(session, facts));
  LUME_UNLOCK_TRY_ASSIGN(auto target, apply::enablement_target(observed, facts, vm));
  LUME_UNLOCK_TRY_ASSIGN(auto probes, apply::run_probes(session, target.shim, profile));
  now.probe_stock = probes.stock;
  now.probe_unlocked = probes.unlocked;
  return report::compare_report(report, now);
}

} // namespace lume_unlock::pipeline
