#include "report/report.hpp"

namespace lume_unlock::report {

namespace {

const std::string k_missing = "missing";

Error bad_report(const std::string& source,
                 const std::string& why,
                 const char* hint = "write it again with 'lume-unlock report NAME --out DIR'") {
  return Error(ErrorCategory::verification, "report " + source, why, hint);
}

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
  const auto tg = [](const nlohmann::json& probe) {
    return probe.is_object() && probe.contains("max_threadgroup_memory")
               ? probe["max_threadgroup_memory"]
               : nlohmann::json();
  };
  items.push_back({std::string("probe ") + side + " threadgroup memory",
                   answer(tg(recorded)),
                   answer(tg(now))});
}

Status expect_type(const nlohmann::json& report,
                   const char* key,
                   nlohmann::json::value_t type,
                   const char* type_name,
                   const std::string& source) {
  if (!report.contains(key) || report[key].type() != type) {
    return bad_report(source, std::string("its '") + key + "' is missing or not " + type_name);
  }
  return ok_status();
}

} // namespace

Result<nlohmann::json> parse_report(const std::string& text, const std::string& source) {
  auto report = nlohmann::json::parse(text, nullptr, false);
  if (!report.is_object()) {
    return bad_report(source, "it is not a JSON object");
  }
  if (report.value("schema", nlohmann::json()) != k_report_schema) {
    return bad_report(source,
                      std::string("its schema is not '") + k_report_schema + "'",
                      "check a folder that 'lume-unlock report' wrote");
  }
  using type = nlohmann::json::value_t;
  LUME_UNLOCK_TRY(expect_type(report, "vm", type::string, "a string", source));
  LUME_UNLOCK_TRY(expect_type(report, "image", type::object, "an object", source));
  LUME_UNLOCK_TRY(expect_type(report, "shim", type::object, "an object", source));
  LUME_UNLOCK_TRY(expect_type(report, "artifacts", type::array, "an array", source));
  LUME_UNLOCK_TRY(expect_type(report, "probe", type::object, "an object", source));
  if (!report["shim"].contains("files") || !report["shim"]["files"].is_array()) {
    return bad_report(source, "its 'shim.files' is missing or not an array");
  }
  std::vector<nlohmann::json> files(report["shim"]["files"].begin(), report["shim"]["files"].end());
  for (const auto& artifact : report["artifacts"]) {
    const auto listed =
        artifact.is_object() ? artifact.value("files", nlohmann::json::array()) : nlohmann::json();
    if (!listed.is_array()) {
      return bad_report(source, "an artifact has no list of files");
    }
    files.insert(files.end(), listed.begin(), listed.end());
  }
  for (const auto& file : files) {
    if (!file.is_object() || !file.value("path", nlohmann::json()).is_string() ||
        !file.value("sha256", nlohmann::json()).is_string()) {
      return bad_report(source, "a file of its shim or artifacts has no path or sha256");
    }
  }
  return report;
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
