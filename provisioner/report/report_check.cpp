#include "report/report.hpp"
#include "util/json_reader.hpp"
#include "util/text_check.hpp"

namespace lume_unlock::report {

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
