#include "provenance/provenance.hpp"
#include "report/report.hpp"
#include "util/json_reader.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"
#include "verify/bench.hpp"

#include <algorithm>

namespace lume_unlock::report {

std::optional<std::int64_t> gpu_cores_from_system_profiler(std::string_view json_text) {
  // The first display adapter that names its count: an integer, or a string of digits.
  const auto cores = util::read_json_text(
      json_text, {ErrorCategory::failure, ""}, [](const util::JsonValue& document) {
        for (const util::JsonValue& adapter : document.object().array("SPDisplaysDataType")) {
          const auto count = adapter.object().find("sppci_cores");
          if (count && count->json().is_number_integer()) {
            return std::optional<std::int64_t>(count->integer());
          }
          const std::string text = count ? count->string() : "";
          if (!text.empty() && text.size() < 7 &&
              text.find_first_not_of("0123456789") == std::string::npos) {
            return std::optional<std::int64_t>(std::stoll(text));
          }
        }
        return std::optional<std::int64_t>();
      });
  return cores.ok() ? cores.value() : std::nullopt;
}

std::optional<std::string> trimmed_fact(std::string_view output) {
  std::string fact = util::trim(output);
  return fact.empty() ? std::nullopt : std::optional<std::string>(fact);
}

namespace {

template <class T>
void put(nlohmann::json& out, const char* key, const std::optional<T>& value) {
  if (value) {
    out[key] = *value;
  }
}

} // namespace

nlohmann::json to_json(const HostFacts& facts) {
  nlohmann::json out = {{"mac", facts.mac}};
  put(out, "macos_version", facts.macos_version);
  put(out, "macos_build", facts.macos_build);
  put(out, "chip", facts.chip);
  put(out, "gpu_cores", facts.gpu_cores);
  return out;
}

const nlohmann::json& member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json null;
  return object.is_object() && object.contains(key) ? object[key] : null;
}

std::optional<double> number_at(const nlohmann::json& object, const char* key) {
  const auto& value = member(object, key);
  return value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt;
}

std::string text_at(const nlohmann::json& object, const char* key) {
  const auto& value = member(object, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

std::string figure_text(const nlohmann::json& value, bool share, int decimals) {
  if (!value.is_number()) {
    return "—";
  }
  return share ? verify::fixed_decimals(value.get<double>() * 100, decimals) + "%"
               : verify::fixed_decimals(value.get<double>(), decimals) + "x";
}

namespace {

nlohmann::json family_answer(const nlohmann::json& probe, const std::string& code) {
  const auto& answer = member(member(probe, "families"), code.c_str());
  return answer.is_boolean() ? answer : nullptr;
}

nlohmann::json threadgroup_memory(const nlohmann::json& probe) {
  const auto& bytes = member(probe, "max_threadgroup_memory");
  return bytes.is_number_integer() ? bytes : nullptr;
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
  const auto bench = inputs.record.bench.value_or(nullptr);
  if (member(bench, "host_chip").is_string()) {
    out["bench_gpu_info"] = {{"value", bench["host_chip"]},
                             {"source",
                              "llama-bench's gpu_info in the host run (" +
                                  bench.value("host_source", std::string("host")) + ")"}};
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

constexpr const char* k_avg_statistic = "ratio of avg_ts";

std::optional<int> whole(const nlohmann::json& object, const char* key) {
  const auto& value = member(object, key);
  return value.is_number_integer() ? std::optional<int>(value.get<int>()) : std::nullopt;
}

/// The request the record's arguments describe, to render the command the bench ran.
verify::BenchRequest recorded_request(const nlohmann::json& bench) {
  verify::BenchRequest request;
  const auto& args = member(bench, "arguments");
  request.prompt = whole(args, "prompt").value_or(request.prompt);
  request.gen = whole(args, "gen").value_or(request.gen);
  request.repetitions = whole(args, "repetitions").value_or(request.repetitions);
  request.threads = whole(args, "threads");
  request.gpu_layers = whole(args, "gpu_layers");
  return request;
}

/// Why a figure was not measured, in the words of the row's verdict.
std::string unmeasured(const char* figure, bool median) {
  if (std::string(figure) == "host_ratio" && median) {
    return "not measured: no host run with samples_ts (bench.host_json or --host-json)";
  }
  if (std::string(figure) == "host_ratio") {
    return "not measured: no host run (bench.host_json or --host-json)";
  }
  return "not measured: the llama-bench output has no samples_ts";
}

} // namespace

nlohmann::json compare_probe_families(const nlohmann::json& stock, const nlohmann::json& unlocked) {
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::string> codes;
  for (const auto* probe : {&unlocked, &stock}) {
    const auto& families = member(*probe, "families");
    for (const auto& [code, answer] : families.items()) {
      if (!families.is_object()) {
        break;
      }
      if (std::find(codes.begin(), codes.end(), code) == codes.end()) {
        codes.push_back(code);
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
    out[key] = whole.value(key, nlohmann::json::object());
  }
  out["lume"] = lume_settings(inputs);
  nlohmann::json shim = whole.value("shim", nlohmann::json::object());
  out["profile"] = shim.value("profile", nlohmann::json::object());
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
  out["enablement"] = whole.value("enablement", nlohmann::json::array());
  out["artifacts"] = whole.value("artifacts", nlohmann::json::array());
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

std::string published_verdict(double measured, double published) {
  if (measured < published * (1 - k_reproduce_tolerance)) {
    return "below the published figure";
  }
  if (measured > published * (1 + k_reproduce_tolerance)) {
    return "above the published figure";
  }
  return "reproduces";
}

nlohmann::json compare_with_published(const nlohmann::json& bench) {
  const auto& published = member(bench, "published");
  if (!published.is_object()) {
    return nullptr;
  }
  const std::string command = text_at(published, "command");
  const verify::BenchRequest request = recorded_request(bench);
  nlohmann::json out = {
      {"source", member(published, "source")},
      {"command", command},
      {"statistic", verify::k_published_statistic},
      {"tolerance", k_reproduce_tolerance},
      {"measured_command", verify::bench_command(request)},
      {"command_matches", !verify::published_command_mismatch(request, command).has_value()}};
  nlohmann::json rows = nlohmann::json::array();
  const auto& tests = member(bench, "tests");
  for (const auto& test : tests.is_array() ? tests : nlohmann::json::array()) {
    for (const char* figure : {"speedup", "host_ratio"}) {
      const auto published_figure =
          number_at(member(published, figure), text_at(test, "kind").c_str());
      if (!published_figure) {
        continue;
      }
      const double target = *published_figure;
      const auto median = number_at(member(test, "median"), figure);
      rows.push_back(
          {{"test", member(test, "test")},
           {"figure", figure},
           {"statistic", verify::k_published_statistic},
           {"measured", median ? nlohmann::json(*median) : nlohmann::json()},
           {"published", target},
           {"verdict", median ? published_verdict(*median, target) : unmeasured(figure, true)}});
      const auto mean = number_at(test, figure);
      rows.push_back({{"test", member(test, "test")},
                      {"figure", figure},
                      {"statistic", k_avg_statistic},
                      {"measured", mean ? nlohmann::json(*mean) : nlohmann::json()},
                      {"published", nullptr},
                      {"verdict",
                       mean ? std::string("not judged: the published figures are medians")
                            : unmeasured(figure, false)}});
    }
  }
  out["rows"] = rows;
  return out;
}

nlohmann::json published_comparison_notes(const nlohmann::json& bench) {
  nlohmann::json notes = nlohmann::json::array();
  const nlohmann::json comparison = compare_with_published(bench);
  if (comparison.is_null()) {
    return notes;
  }
  if (!comparison["command_matches"].get<bool>()) {
    notes.push_back("the bench ran '" + comparison["measured_command"].get<std::string>() +
                    "', not the published run's '" + comparison["command"].get<std::string>() +
                    "': its figures are set beside the published ones, but were not measured "
                    "the same way");
  }
  const auto repetitions = whole(member(bench, "arguments"), "repetitions");
  const auto& tests = member(bench, "tests");
  for (const auto& test : tests.is_array() ? tests : nlohmann::json::array()) {
    const auto& samples = member(member(test, "median"), "samples");
    if (!samples.is_object() || !repetitions || !member(test, "test").is_string()) {
      continue;
    }
    std::string counts;
    bool other = false;
    for (const auto& [run, count] : samples.items()) {
      if (!count.is_number_integer()) {
        continue;
      }
      counts += (counts.empty() ? "" : ", ") + std::to_string(count.get<long long>()) + " " + run;
      other = other || count.get<long long>() != *repetitions;
    }
    if (other) {
      notes.push_back(member(test, "test").get<std::string>() + ": the medians are of " + counts +
                      " samples, while the bench asked for -r " + std::to_string(*repetitions) +
                      " (each run's median is still its own)");
    }
  }
  return notes;
}

namespace {

const std::string k_missing = "missing";

std::string answer(const nlohmann::json& value) {
  return value.is_null() ? k_missing : value.dump();
}

void compare_probe(const char* side,
                   const nlohmann::json& recorded,
                   const nlohmann::json& now,
                   std::vector<CheckItem>& items) {
  const nlohmann::json families = compare_probe_families(recorded, now);
  for (const auto& family : families) {
    // compare_probe_families(recorded, now) puts the report's answer under "stock" and the
    // VM's under "unlocked": here both are one side of the probe.
    items.push_back(
        {std::string("probe ") + side + " family " + family["family"].get<std::string>(),
         answer(family["stock"]),
         answer(family["unlocked"])});
  }
  items.push_back({std::string("probe ") + side + " threadgroup memory",
                   answer(member(recorded, "max_threadgroup_memory")),
                   answer(member(now, "max_threadgroup_memory"))});
}

} // namespace

Result<nlohmann::json> parse_report(const std::string& text, const std::string& source) {
  const util::JsonDocument document{ErrorCategory::verification,
                                    "report " + source,
                                    "write it again with 'lume-unlock report NAME --out DIR'"};
  return util::read_json_text(text, document, [](const util::JsonValue& value) {
    const util::JsonObject report = value.object();
    const util::JsonValue schema = report.at("schema", "a string");
    if (schema.string() != k_report_schema) {
      schema.fail(std::string("expected '") + k_report_schema + "', got " +
                      util::quote_for_message(schema.string()),
                  "check a folder that 'lume-unlock report' wrote");
    }
    report.string("vm");
    report.object("image");
    report.object("probe");
    std::vector<util::JsonValue> files = report.object("shim").array("files");
    for (const util::JsonValue& artifact : report.array("artifacts")) {
      for (const auto& file : artifact.object()
                                  .optional("files", &util::JsonValue::array)
                                  .value_or(std::vector<util::JsonValue>())) {
        files.push_back(file);
      }
    }
    // A file has the sha256 `report --check` compares, or, a link, its target.
    for (const util::JsonValue& item : files) {
      const util::JsonObject file = item.object();
      file.string("path");
      file.string(file.has("link") ? "link" : "sha256");
    }
    return value.json();
  });
}

std::vector<std::string> report_guest_files(const nlohmann::json& report) {
  std::vector<std::string> paths;
  for (const auto& file : report["shim"]["files"]) {
    paths.push_back(file["path"].get<std::string>());
  }
  for (const auto& artifact : report["artifacts"]) {
    for (const auto& file : artifact.value("files", nlohmann::json::array())) {
      paths.push_back(file["path"].get<std::string>());
    }
  }
  return paths;
}

std::vector<CheckItem> compare_report(const nlohmann::json& report, const ObservedVm& now) {
  std::vector<CheckItem> items;
  items.push_back({"image digest",
                   report["image"].value("digest", k_missing),
                   now.image_digest.value_or(k_missing)});
  const auto hashed = [&](const std::string& what, const nlohmann::json& file) {
    const std::string path = file["path"].get<std::string>();
    const auto found = now.file_sha256.find(path);
    // A link reads as "-> TARGET" (guest::link_state), what hash_guest_files reports for it.
    const bool link = file.contains("link");
    items.push_back(
        {(link ? "artifact link" : what) + " " + path,
         link ? "-> " + file["link"].get<std::string>() : file["sha256"].get<std::string>(),
         found == now.file_sha256.end() ? k_missing : found->second});
  };
  for (const auto& file : report["shim"]["files"]) {
    hashed("shim file", file);
  }
  for (const auto& artifact : report["artifacts"]) {
    for (const auto& file : artifact.value("files", nlohmann::json::array())) {
      hashed("artifact file", file);
    }
  }
  const auto& probe = report["probe"];
  compare_probe("stock", probe.value("stock", nlohmann::json()), now.probe_stock, items);
  compare_probe("unlocked", probe.value("unlocked", nlohmann::json()), now.probe_unlocked, items);
  return items;
}

} // namespace lume_unlock::report
