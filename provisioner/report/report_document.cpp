#include "report/report_document.hpp"

#include "provenance/shim_identity.hpp"
#include "report/published_comparison.hpp"
#include "util/sha256.hpp"

#include <algorithm>

namespace lume_unlock::report {

namespace {

template <class T>
void put(nlohmann::json& out, const char* key, const std::optional<T>& value) {
  if (value) {
    out[key] = *value;
  }
}

nlohmann::json family_answer(const nlohmann::json& probe, const std::string& code) {
  if (probe.is_object() && probe.contains("families") && probe["families"].is_object() &&
      probe["families"].contains(code) && probe["families"][code].is_boolean()) {
    return probe["families"][code];
  }
  return nullptr;
}

nlohmann::json threadgroup_memory(const nlohmann::json& probe) {
  if (probe.is_object() && probe.contains("max_threadgroup_memory") &&
      probe["max_threadgroup_memory"].is_number_integer()) {
    return probe["max_threadgroup_memory"];
  }
  return nullptr;
}

nlohmann::json lume_settings(const ReportInputs& inputs) {
  if (inputs.lume_vm) {
    return {{"cpu", inputs.lume_vm->cpu_count},
            {"memory_bytes", inputs.lume_vm->memory_size},
            {"disk_bytes", inputs.lume_vm->disk_size.total},
            {"source", "GET /lume/vms/" + inputs.record.vm}};
  }
  nlohmann::json out = nlohmann::json::object();
  if (inputs.record.hardware) {
    put(out, "cpu", inputs.record.hardware->cpu);
    put(out, "memory_bytes", inputs.record.hardware->memory_bytes);
    put(out, "disk_bytes", inputs.record.hardware->disk_bytes);
  }
  out["source"] = "the provenance record's hardware (Lume did not answer: " +
                  inputs.lume_problem.value_or("no answer") + ")";
  return out;
}

nlohmann::json host_section(const ReportInputs& inputs) {
  nlohmann::json out = to_json(inputs.host);
  const auto& bench = inputs.record.bench;
  if (bench && bench->is_object() && bench->contains("host_chip") &&
      (*bench)["host_chip"].is_string()) {
    out["bench_gpu_info"] = {{"value", (*bench)["host_chip"]},
                             {"source",
                              "llama-bench's gpu_info in the host run (" +
                                  bench->value("host_source", std::string("host")) + ")"}};
  }
  return out;
}

nlohmann::json bench_section(const provenance::Provenance& record) {
  if (!record.bench || !record.bench->is_object() || !record.bench->contains("tests")) {
    return {{"ran", false},
            {"why",
             "no bench run is recorded for VM '" + record.vm + "': run 'lume-unlock bench " +
                 record.vm + " --model PATH' (or create --bench with a recipe's bench: block)"}};
  }
  nlohmann::json out = *record.bench;
  out["ran"] = true;
  const nlohmann::json comparison = compare_with_published(out);
  if (!comparison.is_null()) {
    out["published_comparison"] = comparison;
  }
  return out;
}

} // namespace

nlohmann::json compare_probe_families(const nlohmann::json& stock, const nlohmann::json& unlocked) {
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::string> codes;
  for (const auto* probe : {&unlocked, &stock}) {
    if (probe->is_object() && probe->contains("families") && (*probe)["families"].is_object()) {
      for (const auto& [code, answer] : (*probe)["families"].items()) {
        if (std::find(codes.begin(), codes.end(), code) == codes.end()) {
          codes.push_back(code);
        }
      }
    }
  }
  for (const auto& code : codes) {
    out.push_back({{"family", code},
                   {"stock", family_answer(stock, code)},
                   {"unlocked", family_answer(unlocked, code)}});
  }
  return out;
}

nlohmann::json build_report(const ReportInputs& inputs) {
  const provenance::Provenance& record = inputs.record;
  nlohmann::json out = {{"schema", k_report_schema},
                        {"vm", record.vm},
                        {"generated_at", inputs.generated_at},
                        {"tool", {{"name", "lume-unlock"}, {"version", inputs.tool_version}}}};
  put(out, "label", inputs.label);
  nlohmann::json notes = nlohmann::json::array();
  out["host"] = host_section(inputs);
  if (!inputs.host.mac) {
    notes.push_back("the report was written on a host that is not a Mac: its macOS version, "
                    "chip and GPU cores are absent");
  }
  const nlohmann::json whole = provenance::to_json(record);
  for (const char* key : {"guest", "image", "recipe"}) {
    out[key] = whole.contains(key) ? whole[key] : nlohmann::json::object();
  }
  out["lume"] = lume_settings(inputs);
  nlohmann::json shim = whole.contains("shim") ? whole["shim"] : nlohmann::json::object();
  out["profile"] = shim.contains("profile") ? shim["profile"] : nlohmann::json::object();
  shim.erase("profile");
  if (!shim.contains("files")) {
    shim["files"] = nlohmann::json::array();
  }
  if (record.shim && !provenance::shim_that_ran(*record.shim).empty()) {
    shim["ran"] = provenance::shim_that_ran(*record.shim);
  }
  out["shim"] = shim;

  const nlohmann::json stock = record.probe ? record.probe->stock.value_or(nullptr) : nullptr;
  const nlohmann::json unlocked = record.probe ? record.probe->unlocked.value_or(nullptr) : nullptr;
  out["probe"] = {
      {"stock", stock},
      {"unlocked", unlocked},
      {"families", compare_probe_families(stock, unlocked)},
      {"threadgroup_memory",
       {{"stock", threadgroup_memory(stock)}, {"unlocked", threadgroup_memory(unlocked)}}}};
  if (stock.is_null() || unlocked.is_null()) {
    notes.push_back("the record holds no probe answers: run 'lume-unlock verify " + record.vm +
                    "'");
  }
  out["enablement"] = whole.contains("enablement") ? whole["enablement"] : nlohmann::json::array();
  out["artifacts"] = whole.contains("artifacts") ? whole["artifacts"] : nlohmann::json::array();
  out["bench"] = bench_section(record);
  if (!out["bench"]["ran"].get<bool>()) {
    notes.push_back(out["bench"]["why"]);
  }
  for (const auto& note : published_comparison_notes(out["bench"])) {
    notes.push_back(note);
  }
  nlohmann::json raw = nlohmann::json::array();
  for (const auto& input : inputs.raw) {
    raw.push_back({{"name", input.name},
                   {"source", input.source},
                   {"sha256", util::sha256_hex(input.bytes)},
                   {"size", input.bytes.size()}});
  }
  out["raw_inputs"] = raw;
  out["notes"] = notes;
  return out;
}

} // namespace lume_unlock::report
