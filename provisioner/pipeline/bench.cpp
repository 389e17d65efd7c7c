#include "pipeline/bench.hpp"

#include "oci/manifest.hpp"
#include "pipeline/allow.hpp"
#include "pipeline/vm_state.hpp"
#include "provenance/provenance.hpp"
#include "util/atomic_file.hpp"
#include "util/json_reader.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"
#include "verify/bench.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace lume_unlock::pipeline {

namespace {

using util::JsonObject;
using util::JsonValue;

/// How a bench record read back is named when it cannot be read; nothing shows it, as a summary
/// or annotations of a record that cannot be read are empty.
const util::JsonDocument k_record{ErrorCategory::failure, "the bench record"};

template <class T>
void put_first(nlohmann::json& out,
               const char* key,
               const std::vector<verify::LlamaBenchTest>& tests,
               std::optional<T> verify::LlamaBenchTest::*field) {
  for (const auto& test : tests) {
    if (test.*field) {
      out[key] = *(test.*field);
      return;
    }
  }
}

} // namespace

std::vector<BenchRawFile> bench_raw_files(const apply::GuestBench& measured,
                                          const std::optional<std::string>& host_json) {
  std::vector<BenchRawFile> files = {{"stock.json", measured.stock.stdout_text},
                                     {"stock.stderr", measured.stock.stderr_text},
                                     {"unlocked.json", measured.unlocked.stdout_text},
                                     {"unlocked.stderr", measured.unlocked.stderr_text}};
  if (host_json) {
    files.push_back({"host.json", *host_json});
  }
  return files;
}

nlohmann::json bench_raw_record(const std::vector<BenchRawFile>& files) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& file : files) {
    out[file.name] = {{"sha256", util::sha256_hex(file.bytes)}, {"size", file.bytes.size()}};
  }
  return out;
}

Result<std::string> bench_raw_dir(const std::string& state_dir, const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(auto record, provenance::provenance_path(state_dir, vm));
  return record.substr(0, record.rfind('/')) + "/bench";
}

BenchOptions bench_options_from_recipe(const recipe::BenchSpec& spec) {
  BenchOptions options;
  options.entry = spec.entry;
  options.request = spec.request;
  options.thresholds = spec.thresholds;
  options.published = spec.published;
  options.perplexity_entry = spec.perplexity_entry;
  options.max_perplexity_drift = spec.max_perplexity_drift;
  return options;
}

std::string describe_bench(const BenchOptions& options) {
  const verify::BenchRequest& r = options.request;
  std::string text = "entry " + util::quote_for_message(options.entry) + ", model " +
                     util::quote_for_message(r.model) + ", -p " + std::to_string(r.prompt) +
                     " -n " + std::to_string(r.gen) + " -r " + std::to_string(r.repetitions);
  const verify::BenchThresholds& t = options.thresholds;
  if (t.empty()) {
    text += ", no speed gate but the Metal log";
  } else {
    text += ", gate";
    if (t.min_speedup) {
      text += " min_speedup " + verify::compact_number(*t.min_speedup);
    }
    if (!t.min_host_ratio.empty()) {
      text += std::string(t.min_speedup ? "," : "") + " min_host_ratio " +
              verify::format_host_ratio(t.min_host_ratio);
    }
  }
  text += "; perplexity with entry " + util::quote_for_message(options.perplexity_entry) +
          " within " +
          verify::compact_number(
              100 * options.max_perplexity_drift.value_or(verify::k_default_max_perplexity_drift)) +
          "% of the CPU's";
  if (options.host_source) {
    text += ", host figures from " + *options.host_source;
  }
  if (options.published) {
    text += ", beside the published run's figures";
  }
  return text;
}

nlohmann::json bench_record(const BenchOptions& options,
                            const apply::GuestBench& measured,
                            const std::vector<verify::BenchRow>& rows,
                            const std::vector<std::string>& failures,
                            const std::string& measured_at) {
  nlohmann::json out = {{"measured_at", measured_at},
                        {"entry", options.entry},
                        {"model", options.request.model},
                        {"arguments",
                         {{"prompt", options.request.prompt},
                          {"gen", options.request.gen},
                          {"repetitions", options.request.repetitions}}}};
  // -t and -ngl too: a report checks the whole command against a published run's.
  if (options.request.threads) {
    out["arguments"]["threads"] = *options.request.threads;
  }
  if (options.request.gpu_layers) {
    out["arguments"]["gpu_layers"] = *options.request.gpu_layers;
  }
  const auto& unlocked = measured.unlocked.tests;
  put_first(out, "build_commit", unlocked, &verify::LlamaBenchTest::build_commit);
  put_first(out, "model_type", unlocked, &verify::LlamaBenchTest::model_type);
  put_first(out, "backends", unlocked, &verify::LlamaBenchTest::backends);
  put_first(out, "gpu", unlocked, &verify::LlamaBenchTest::gpu_info);
  if (options.host) {
    put_first(out, "host_chip", *options.host, &verify::LlamaBenchTest::gpu_info);
    out["host_source"] = options.host_source.value_or("host");
  }
  out["tests"] = nlohmann::json::array();
  for (const auto& row : rows) {
    out["tests"].push_back(verify::to_json(row));
  }
  out["log"] = {{"stock", verify::verdict_name(measured.stock.log.verdict)},
                {"unlocked", verify::verdict_name(measured.unlocked.log.verdict)}};
  out["thresholds"] = verify::to_json(options.thresholds);
  out["passed"] = failures.empty();
  out["failures"] = failures;
  out["raw"] = bench_raw_record(bench_raw_files(measured, options.host_json));
  if (options.published) {
    out["published"] = verify::to_json(*options.published);
  }
  return out;
}

std::string bench_summary(const nlohmann::json& record) {
  const auto summary = util::read_json(record, k_record, [](const JsonValue& value) {
    const JsonObject bench = value.object();
    std::vector<std::string> figures;
    for (const JsonValue& item : bench.array("tests")) {
      const JsonObject test = item.object();
      figures.push_back(test.string("test") + " " +
                        verify::fixed_decimals(test.at("speedup", "a number").number(), 2) + "x");
      if (const auto ratio = test.optional("host_ratio", &JsonValue::number)) {
        figures.back() += " " + verify::fixed_decimals(*ratio * 100, 1) + "% of host";
      }
    }
    if (const auto perplexity = bench.find("perplexity")) {
      figures.push_back(verify::perplexity_phrase(perplexity->json()));
    }
    std::vector<std::string> detail;
    if (const auto log = bench.find("log")) {
      detail.push_back("log " + log->object().string("unlocked"));
    }
    if (const auto passed = bench.optional("passed", &JsonValue::boolean)) {
      detail.push_back(*passed ? "gate passed" : "gate FAILED");
    }
    if (const auto at = bench.optional_string("measured_at")) {
      detail.push_back(*at);
    }
    figures.erase(std::remove(figures.begin(), figures.end(), ""), figures.end());
    const std::string out = util::join(figures, ", ");
    return detail.empty() ? out : out + " (" + util::join(detail, ", ") + ")";
  });
  return summary.ok() ? summary.value() : std::string();
}

namespace {

/// "pp512 @ d4096" → "pp512-d4096": a test name as a part of an annotation key.
std::string key_part(const std::string& test) {
  std::string out;
  bool gap = false;
  for (const char c : test) {
    const char lower = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if ((lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9')) {
      if (gap && !out.empty()) {
        out += '-';
      }
      out += lower;
      gap = false;
    } else {
      gap = true;
    }
  }
  return out;
}

} // namespace

oci::Annotations bench_annotations(const nlohmann::json& record) {
  const std::string prefix = oci::annotation::lume_unlock_bench_prefix;
  const auto annotations = util::read_json(record, k_record, [&](const JsonValue& value) {
    const JsonObject bench = value.object();
    oci::Annotations out;
    for (const JsonValue& item :
         bench.optional("tests", &JsonValue::array).value_or(std::vector<JsonValue>())) {
      const JsonObject test = item.object();
      const std::string name = key_part(test.string("test"));
      for (const auto& [field, decimals] : {std::pair<const char*, int>{"speedup", 2},
                                            {"stock_ts", 2},
                                            {"unlocked_ts", 2},
                                            {"host_ratio", 3}}) {
        if (const auto figure = test.optional(field, &JsonValue::number); figure && !name.empty()) {
          out[prefix + name + "." + field] = verify::fixed_decimals(*figure, decimals);
        }
      }
    }
    for (const char* field : {"model_type", "build_commit", "gpu", "host_chip", "measured_at"}) {
      if (const auto text = bench.optional_string(field)) {
        out[prefix + field] = *text;
      }
    }
    if (const auto log = bench.find("log")) {
      out[prefix + "log"] = log->object().string("unlocked");
    }
    if (const auto passed = bench.optional("passed", &JsonValue::boolean)) {
      out[prefix + "passed"] = *passed ? "true" : "false";
    }
    if (const auto perplexity = bench.find("perplexity")) {
      for (const char* side : {"stock", "unlocked", "host"}) {
        const auto run = perplexity->object().find(side);
        if (const auto estimate =
                run ? run->object().optional("estimate", &JsonValue::number) : std::nullopt) {
          out[prefix + "perplexity." + side] = verify::fixed_decimals(*estimate, 4);
        }
      }
    }
    return out;
  });
  if (!annotations.ok()) {
    return {};
  }
  oci::Annotations out = annotations.value();
  if (const std::string summary = bench_summary(record); !summary.empty()) {
    out[prefix + "summary"] = summary;
  }
  return out;
}

namespace {

/// The entry `name` on the guest's list, or a usage error with a "did you mean" hint.
Result<const enablement::EnablementEntry*> find_entry(const apply::GuestEnablementView& view,
                                                      const std::string& name,
                                                      const std::string& what,
                                                      const std::string& vm,
                                                      const char* program,
                                                      const char* flag) {
  if (const enablement::EnablementEntry* entry = view.list.find(name)) {
    return entry;
  }
  return unknown_entry(view.list,
                       name,
                       what,
                       "entry " + util::quote_for_message(name) + " is not on its enablement list",
                       enable_first(program, vm, name),
                       flag);
}

verify::PerplexityComparison compare_perplexity(const BenchOptions& options,
                                                const apply::GuestPerplexity& measured) {
  verify::PerplexityComparison out;
  out.stock = measured.stock.run;
  out.unlocked = measured.unlocked.run;
  out.host = options.host_perplexity;
  out.max_drift = options.max_perplexity_drift.value_or(verify::k_default_max_perplexity_drift);
  out.max_drift_name = options.max_perplexity_drift_name;
  return out;
}

std::vector<BenchRawFile> perplexity_raw_files(const apply::GuestPerplexity& measured,
                                               const std::optional<std::string>& host_output) {
  std::vector<BenchRawFile> files = {{"perplexity-stock.stdout", measured.stock.stdout_text},
                                     {"perplexity-stock.stderr", measured.stock.stderr_text},
                                     {"perplexity-unlocked.stdout", measured.unlocked.stdout_text},
                                     {"perplexity-unlocked.stderr", measured.unlocked.stderr_text}};
  if (host_output) {
    files.push_back({"host-perplexity.txt", *host_output});
  }
  return files;
}

/// Writes each file atomically into bench_raw_dir (created 0700), then removes the other
/// k_bench_raw_names there (the host.json of an earlier run with a host).
Status write_bench_raw_files(const std::string& state_dir,
                             const std::string& vm,
                             const std::vector<BenchRawFile>& files) {
  LUME_UNLOCK_TRY_ASSIGN(auto dir, bench_raw_dir(state_dir, vm));
  LUME_UNLOCK_TRY(util::make_directories(dir, 0700));
  for (const auto& file : files) {
    LUME_UNLOCK_TRY(util::write_file_atomic(dir + "/" + file.name, file.bytes, 0644));
  }
  for (const char* name : k_bench_raw_names) {
    bool kept = false;
    for (const auto& file : files) {
      kept = kept || file.name == name;
    }
    const std::string path = dir + "/" + name;
    if (!kept && std::remove(path.c_str()) != 0 && errno != ENOENT) {
      return Error(ErrorCategory::failure,
                   "removing the earlier bench output '" + path + "'",
                   std::strerror(errno));
    }
  }
  return ok_status();
}

/// Writes the record: guest first, then host (keeping the published run an earlier bench of
/// the same command recorded, when `options` names none).
Status record_bench(guest::GuestSession& session,
                    const apply::GuestEnablementView& view,
                    const BenchOptions& options,
                    BenchOutcome& outcome,
                    const std::string& now) {
  auto current = current_vm_record(session, view.facts.home, options.state_dir, options.vm);
  provenance::Provenance record = current ? *current : provenance::Provenance{};
  // A later `bench` of the same command still reproduces the published run the recipe named
  // at create --bench: keep it, so the report keeps comparing with it.
  const nlohmann::json earlier = record.bench.value_or(nullptr);
  const auto command = util::read_json(earlier, k_record, [](const JsonValue& value) {
    return value.object().object("published").string("command");
  });
  if (!options.published && command.ok() &&
      !verify::published_command_mismatch(options.request, command.value())) {
    outcome.record["published"] = earlier["published"];
  }
  record.vm = options.vm;
  record.bench = outcome.record;
  record.created_at = record.created_at.value_or(now);
  record.updated_at = now;
  return write_vm_record(session, view.facts.home, options.state_dir, record);
}

} // namespace

Result<BenchOutcome> run_bench(guest::GuestSession& session,
                               const BenchOptions& options,
                               const util::ProgressCallback& progress) {
  const std::string what = "bench of VM " + util::quote_for_message(options.vm);
  LUME_UNLOCK_TRY_ASSIGN(auto view, apply::read_guest_enablement(session, options.vm));
  LUME_UNLOCK_TRY_ASSIGN(
      const auto* entry,
      find_entry(view, options.entry, what, options.vm, "llama-bench", "--entry"));
  LUME_UNLOCK_TRY_ASSIGN(const auto* perplexity_entry,
                         find_entry(view,
                                    options.perplexity_entry,
                                    what,
                                    options.vm,
                                    "llama-perplexity",
                                    "--perplexity-entry"));
  LUME_UNLOCK_TRY_ASSIGN(
      auto measured,
      apply::run_guest_bench(session, *entry, view.target, options.request, progress));
  LUME_UNLOCK_TRY_ASSIGN(
      auto perplexity,
      apply::run_guest_perplexity(
          session, *perplexity_entry, view.target, view.facts.home, options.request, progress));
  auto rows = verify::compare_bench(measured.stock.tests, measured.unlocked.tests, options.host);
  if (!rows.ok()) {
    return rows.error().with_context(what);
  }
  BenchOutcome outcome;
  outcome.rows = rows.value();
  outcome.stock_log = measured.stock.log;
  outcome.unlocked_log = measured.unlocked.log;
  outcome.failures = verify::gate_bench(outcome.rows, options.thresholds, outcome.unlocked_log);
  outcome.perplexity = compare_perplexity(options, perplexity);
  for (auto& failure : verify::gate_perplexity(outcome.perplexity)) {
    outcome.failures.push_back(std::move(failure));
  }
  // Metal's failure lines in the GPU run make its figures untrustworthy, whatever they are.
  if (const auto& log = perplexity.unlocked.log; log.verdict == verify::LlamaLogVerdict::broken) {
    outcome.failures.push_back("the llama-perplexity unlocked run's Metal log is broken: " +
                               (log.reasons.size() > 1 ? log.reasons[1] : log.reasons.front()));
  }
  const std::string now = provenance::rfc3339_now();
  outcome.record = bench_record(options, measured, outcome.rows, outcome.failures, now);
  outcome.record["perplexity"] = verify::to_json(outcome.perplexity);
  auto files = bench_raw_files(measured, options.host_json);
  for (auto& file : perplexity_raw_files(perplexity, options.host_perplexity_output)) {
    files.push_back(std::move(file));
  }
  outcome.record["raw"] = bench_raw_record(files);
  // The outputs first, then the record that names their sha256: a record never points at bytes
  // that were not kept.
  auto kept = write_bench_raw_files(options.state_dir, options.vm, files);
  if (!kept.ok()) {
    return kept.error()
        .with_context(what + ": keeping llama-bench's outputs")
        .with_hint("the bench ran; run it again to record it");
  }
  auto written = record_bench(session, view, options, outcome, now);
  if (!written.ok()) {
    return written.error()
        .with_context(what + ": recording the figures")
        .with_hint("the bench ran; run it again to record it");
  }
  return outcome;
}

} // namespace lume_unlock::pipeline
