#include "report/report.hpp"
#include "verify/bench.hpp"

#include <cstdio>
#include <sstream>

namespace lume_unlock::report {

namespace {

using verify::fixed_decimals;

/// A JSON value as a table cell: strings bare, absent as "—", '|' escaped.
std::string cell(const nlohmann::json& object, const char* key) {
  const auto& value = member(object, key);
  if (value.is_null()) {
    return "—";
  }
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  std::string out;
  for (const char c : text) {
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  }
  return out;
}

std::string figure(const nlohmann::json& test, const char* ts, const char* stddev) {
  const auto value = number_at(test, ts);
  const auto spread = number_at(test, stddev);
  return !value ? "—"
                : fixed_decimals(*value, 2) + (spread ? " ± " + fixed_decimals(*spread, 2) : "");
}

/// The correctness check's figures: llama-perplexity on the CPU, unlocked on the GPU, the host.
void correct(std::ostringstream& md, const nlohmann::json& perplexity) {
  md << "\n**Correct?** ";
  if (!perplexity.is_object()) {
    md << "not measured (a bench before llama-perplexity was part of it).\n";
    return;
  }
  md << "llama-perplexity on the shipped text (`-c " << cell(perplexity, "context") << " -b "
     << cell(perplexity, "batch")
     << "`), final estimate:\n\n| run | PPL | chunks |\n| --- | ---: | --- |\n";
  for (const auto& [side, name] :
       {std::pair<const char*, const char*>{"stock", "stock, CPU (-ngl 0)"},
        {"unlocked", "unlocked, GPU"},
        {"host", "host"}}) {
    const auto& run = member(perplexity, side);
    if (!run.is_object()) {
      continue;
    }
    std::string chunks;
    for (const auto& value : run.value("chunks", nlohmann::json::array())) {
      chunks += (chunks.empty() ? "" : ", ") +
                (value.is_number() ? fixed_decimals(value.get<double>(), 4) : "?");
    }
    const auto estimate = number_at(run, "estimate");
    md << "| " << name << " | " << (estimate ? fixed_decimals(*estimate, 4) : "**none**") << " | "
       << chunks << " |\n";
  }
  const auto& drift = member(perplexity, "drift");
  const auto& max_drift = member(perplexity, "max_drift");
  md << "\nDrift " << (drift.is_number() ? figure_text(drift, true, 3) : "unknown") << " (allowed "
     << (max_drift.is_number() ? figure_text(max_drift, true, 2) : "?") << ").\n";
}

void how_fast(std::ostringstream& md, const nlohmann::json& bench) {
  md << "## How fast\n\n";
  if (!bench.value("ran", false)) {
    md << "No bench run: " << cell(bench, "why") << ".\n\n";
    return;
  }
  md << "| test | stock t/s | unlocked t/s | speedup | host t/s | unlocked / host |\n"
     << "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& test : bench["tests"]) {
    md << "| " << cell(test, "test") << " | " << figure(test, "stock_ts", "stock_stddev_ts")
       << " | " << figure(test, "unlocked_ts", "unlocked_stddev_ts") << " | "
       << figure_text(member(test, "speedup"), false, 2) << " | "
       << figure(test, "host_ts", "host_stddev_ts") << " | "
       << figure_text(member(test, "host_ratio"), true, 1) << " |\n";
  }
  md << "\nFigures are llama-bench's mean tokens/s ± standard deviation. ";
  const auto& log = bench.value("log", nlohmann::json::object());
  md << "Metal log of the unlocked run: `" << cell(log, "unlocked") << "` (stock run: `"
     << cell(log, "stock")
     << "`). Gate: " << (bench.value("passed", false) ? "passed" : "**FAILED**");
  if (bench.contains("thresholds") && !bench["thresholds"].empty()) {
    md << " (thresholds `" << bench["thresholds"].dump() << "`)";
  }
  md << ".\n";
  if (bench.contains("failures")) {
    for (const auto& failure : bench["failures"]) {
      md << "- " << failure.get<std::string>() << "\n";
    }
  }
  correct(md, bench.value("perplexity", nlohmann::json()));
  md << "\n![stock, unlocked and host tokens/s](speedup.svg)\n\n";
}

/// The measured figures beside the published run's, so a reader sees at a glance whether this
/// Mac reproduces it.
void against_published(std::ostringstream& md, const nlohmann::json& bench) {
  const auto& comparison = member(bench, "published_comparison");
  if (!comparison.is_object()) {
    return;
  }
  md << "## Against the published run\n\n"
     << "The published figures (" << cell(comparison, "source") << ") were measured with `"
     << cell(comparison, "command") << "`; they are **" << cell(comparison, "statistic")
     << "** (the median of each run's repetitions, then their ratio). This bench ran `"
     << cell(comparison, "measured_command") << "`"
     << (comparison.value("command_matches", false) ? ", the same command"
                                                    : ", **not the published command**")
     << ". A figure reproduces the published one within "
     << fixed_decimals(comparison.value("tolerance", 0.0) * 100, 0)
     << " % of it; the ratio of llama-bench's means (avg_ts) is shown beside it, not judged.\n\n"
     << "| test | figure | statistic | measured | published | verdict |\n"
     << "| --- | --- | --- | ---: | ---: | --- |\n";
  for (const auto& row : comparison.value("rows", nlohmann::json::array())) {
    const bool share = text_at(row, "figure") == "host_ratio";
    const std::string verdict = cell(row, "verdict");
    md << "| " << cell(row, "test") << " | " << (share ? "unlocked / host" : "speedup") << " | "
       << cell(row, "statistic") << " | " << figure_text(member(row, "measured"), share, 2) << " | "
       << figure_text(member(row, "published"), share, 2) << " | "
       << (row["published"].is_number() ? "**" + verdict + "**" : verdict) << " |\n";
  }
  md << "\n";
}

/// The table of what was measured: host, guest, VM, image, shim and llama.cpp.
void on_what_table(std::ostringstream& md, const nlohmann::json& report) {
  md << "## On what\n\n| | |\n| --- | --- |\n";
  const auto& host = report["host"];
  if (host.value("mac", false)) {
    md << "| host | macOS " << cell(host, "macos_version") << " (" << cell(host, "macos_build")
       << "), " << cell(host, "chip") << ", " << cell(host, "gpu_cores") << " GPU cores |\n";
  } else {
    md << "| host | not a Mac: its macOS version, chip and GPU cores are not known |\n";
  }
  if (host.contains("bench_gpu_info")) {
    md << "| host, as llama-bench names it | " << cell(host["bench_gpu_info"], "value") << " ("
       << cell(host["bench_gpu_info"], "source") << ") |\n";
  }
  const auto& guest = report["guest"];
  md << "| guest | " << cell(guest, "os") << " " << cell(guest, "version") << " ("
     << cell(guest, "build") << "), " << cell(guest, "arch") << " |\n";
  const auto& lume = report["lume"];
  md << "| VM settings | " << cell(lume, "cpu") << " CPUs, " << cell(lume, "memory_bytes")
     << " bytes memory, " << cell(lume, "disk_bytes") << " bytes disk (" << cell(lume, "source")
     << ") |\n";
  const auto& image = report["image"];
  md << "| image | `" << cell(image, "reference") << "` |\n| image digest | `"
     << cell(image, "digest") << "` |\n";
  if (image.contains("signed_by")) {
    md << "| image signed by | `" << cell(image, "signed_by") << "` |\n";
  }
  const auto& shim = report["shim"];
  md << "| shim bundle | " << cell(shim, "bundle_version") << " " << cell(shim, "platform");
  if (shim.contains("bundle_digest")) {
    md << ", `" << cell(shim, "bundle_reference") << "`";
  }
  md << " |\n";
  if (shim.contains("ran")) {
    md << "| shim that ran | " << cell(shim, "ran") << " |\n";
  }
  if (shim.contains("bundle_signed_by")) {
    md << "| shim bundle signed by | `" << cell(shim, "bundle_signed_by") << "` |\n";
  }
  const auto& profile = report["profile"];
  md << "| shim profile | apple_family_max " << cell(profile, "apple_family_max")
     << ", max_threadgroup_memory " << cell(profile, "max_threadgroup_memory") << " |\n";
  const auto& bench = report["bench"];
  if (bench.value("ran", false)) {
    md << "| llama.cpp | build " << cell(bench, "build_commit") << ", backends "
       << cell(bench, "backends") << ", guest GPU " << cell(bench, "gpu") << " |\n"
       << "| model | " << cell(bench, "model_type") << " (`" << cell(bench, "model") << "`) |\n";
  }
}

/// The files behind the table: the shim's, the probe's answers, the enablement, the artifacts.
void on_what_details(std::ostringstream& md, const nlohmann::json& report) {
  const auto& shim = report["shim"];
  md << "\n### Installed shim files\n\n| path | sha256 |\n| --- | --- |\n";
  for (const auto& file : shim["files"]) {
    md << "| `" << cell(file, "path") << "` | `" << cell(file, "sha256") << "` |\n";
  }
  md << "\n### The probe, stock vs unlocked\n\n";
  const auto& tg = report["probe"]["threadgroup_memory"];
  md << "Threadgroup memory: " << cell(tg, "stock") << " → " << cell(tg, "unlocked")
     << " bytes.\n\n| family | stock | unlocked |\n| --- | --- | --- |\n";
  for (const auto& family : report["probe"]["families"]) {
    md << "| " << cell(family, "family") << " | " << cell(family, "stock") << " | "
       << cell(family, "unlocked") << " |\n";
  }
  md << "\n### Enablement\n\n| entry | program | resolved | agent | origin |\n"
     << "| --- | --- | --- | --- | --- |\n";
  for (const auto& entry : report["enablement"]) {
    md << "| " << cell(entry, "name") << " | `" << cell(entry, "program") << "` | `"
       << cell(entry, "resolved_program") << "` | " << cell(entry, "agent") << " | "
       << cell(entry, "origin") << " |\n";
  }
  md << "\n### Installed artifacts\n\n";
  if (report["artifacts"].empty()) {
    md << "The recipe installed no artifacts.\n";
  }
  for (const auto& artifact : report["artifacts"]) {
    md << "- `" << cell(artifact, "source") << "` (sha256 `" << cell(artifact, "sha256") << "`) → `"
       << cell(artifact, "dest") << "`\n";
    for (const auto& file : artifact.value("files", nlohmann::json::array())) {
      if (file.contains("link")) {
        md << "  - `" << cell(file, "path") << "` → `" << cell(file, "link") << "` (link)\n";
        continue;
      }
      md << "  - `" << cell(file, "path") << "` sha256 `" << cell(file, "sha256") << "`"
         << (file.contains("macho") ? ", Mach-O " + cell(file, "macho") : std::string()) << "\n";
    }
  }
  md << "\n";
}

} // namespace

std::string render_report_markdown(const nlohmann::json& report) {
  std::ostringstream md;
  const std::string vm = report.value("vm", std::string());
  const auto& bench = report["bench"];
  md << "# lume-unlock report: VM '" << vm << "'\n\n";
  if (report.contains("label")) {
    md << "**" << cell(report, "label") << "**\n\n";
  }
  md << "## What was measured\n\n";
  if (bench.value("ran", false)) {
    const auto& args = bench.value("arguments", nlohmann::json::object());
    md << "llama-bench (`-p " << cell(args, "prompt") << " -n " << cell(args, "gen") << " -r "
       << cell(args, "repetitions");
    // -t and -ngl are recorded only when the bench set them (llama-bench's defaults otherwise).
    if (args.contains("threads")) {
      md << " -t " << cell(args, "threads");
    }
    if (args.contains("gpu_layers")) {
      md << " -ngl " << cell(args, "gpu_layers");
    }
    md << "`) on `" << cell(bench, "model") << "` in the guest, "
       << "once without the shim (stock) and once with it (unlocked), at "
       << cell(bench, "measured_at");
    if (bench.contains("host_source")) {
      md << ", compared with the host's run (" << cell(bench, "host_source") << ")";
    }
    md << ".\n\n";
  } else {
    md << "Nothing was benchmarked in this VM; the report holds its provenance only.\n\n";
  }
  how_fast(md, bench);
  against_published(md, bench);
  on_what_table(md, report);
  on_what_details(md, report);
  md << "## How to reproduce and re-check\n\n```sh\n"
     << "lume-unlock pull " << cell(report["image"], "reference") << "@"
     << cell(report["image"], "digest") << " " << vm << "\n";
  if (bench.value("ran", false)) {
    const auto& args = bench.value("arguments", nlohmann::json::object());
    md << "lume-unlock bench " << vm << " --model '" << cell(bench, "model") << "' -p "
       << cell(args, "prompt") << " -n " << cell(args, "gen") << " -r " << cell(args, "repetitions")
       << "\n";
  }
  md << "lume-unlock report --check DIR " << vm << "   # exit 6 names every difference\n```\n\n";
  md << "## Raw inputs\n\nCopied verbatim into this folder:\n\n| file | sha256 | bytes | from |\n"
     << "| --- | --- | ---: | --- |\n";
  for (const auto& raw : report["raw_inputs"]) {
    md << "| `" << cell(raw, "name") << "` | `" << cell(raw, "sha256") << "` | "
       << cell(raw, "size") << " | `" << cell(raw, "source") << "` |\n";
  }
  if (!report["notes"].empty()) {
    md << "\n## Notes\n\n";
    for (const auto& note : report["notes"]) {
      md << "- " << note.get<std::string>() << "\n";
    }
  }
  md << "\nWritten by lume-unlock " << cell(report["tool"], "version") << " at "
     << cell(report, "generated_at") << " from the records it keeps; no figure is typed in.\n";
  return md.str();
}

} // namespace lume_unlock::report
