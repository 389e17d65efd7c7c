#include "apply/shim_record.hpp"

#include "guest/guest_layout.hpp"
#include "util/json_parse.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace lume_unlock::apply {

namespace {

nlohmann::json file_json(const InstalledFile& file) {
  nlohmann::json value = {{"path", file.path}, {"sha256", file.sha256}};
  if (!file.slices.empty()) {
    value["slices"] = file.slices;
  }
  return value;
}

InstalledFile file_from(const nlohmann::json& value) {
  InstalledFile file{value.at("path").get<std::string>(), value.at("sha256").get<std::string>()};
  if (file.path.empty() || file.path[0] != '/' || !util::is_sha256_hex(file.sha256)) {
    throw std::invalid_argument("bad file entry " + value.dump());
  }
  if (value.contains("slices")) {
    file.slices = value.at("slices").get<std::vector<std::string>>();
  }
  return file;
}

} // namespace

std::string InstalledShim::shim_file_name() const {
  return util::base_name(shim.path);
}

std::string InstalledShim::arch() const {
  const auto dash = platform.find('-');
  return dash == std::string::npos ? platform : platform.substr(dash + 1);
}

const char* child_rule_name(ChildRule rule) {
  switch (rule) {
  case ChildRule::inherit:
    return "inherit";
  case ChildRule::removed:
    return "removed";
  case ChildRule::unknown:
    return "unknown";
  }
  return "unknown";
}

ChildRule InstalledShim::child_rule() const {
  if (external) {
    return ChildRule::inherit; // upstream's build never takes itself out of the variable
  }
  if (std::find(shim.slices.begin(), shim.slices.end(), "arm64e") != shim.slices.end()) {
    return ChildRule::inherit;
  }
  // A darwin shim whose record names no slices may be universal or not; every other platform's
  // shim (the Linux .so) removes itself from the variable at load.
  return util::starts_with(platform, "darwin-") && shim.slices.empty() ? ChildRule::unknown
                                                                       : ChildRule::removed;
}

bool InstalledShim::operator==(const InstalledShim& other) const {
  return bundle_version == other.bundle_version && platform == other.platform &&
         inject_env == other.inject_env && shim == other.shim && external == other.external &&
         probe == other.probe && support == other.support;
}

std::string shim_scope(const InstalledShim& shim) {
  return shim.external ? "scoped by the LaunchAgent environment only (upstream shim has no guard "
                         "file)"
                       : "scoped by the guard file and the LaunchAgent environment";
}

std::string installed_shim_record_path(const std::string& home) {
  return guest::support_dir_of_home(home) + "/shim/current.json";
}

std::string render_installed_shim(const InstalledShim& record) {
  nlohmann::json document = {{"schema", k_installed_shim_schema},
                             {"bundle_version", record.bundle_version},
                             {"platform", record.platform},
                             {"inject_env", record.inject_env},
                             {"shim", file_json(record.shim)},
                             {"support", nlohmann::json::array()}};
  if (record.probe) {
    document["probe"] = file_json(*record.probe);
  }
  if (record.external) {
    document["external"] = true;
  }
  for (const InstalledFile& file : record.support) {
    document["support"].push_back(file_json(file));
  }
  return document.dump(2) + "\n";
}

Result<InstalledShim> parse_installed_shim(std::string_view text, const std::string& source) {
  util::JsonParsed parsed = util::parse_json(text);
  if (!parsed.ok()) {
    return Error(ErrorCategory::verification,
                 "reading " + source,
                 "it is not valid JSON: " + util::describe_json_error(*parsed.error, text.size()),
                 "reinstall the shim with 'lume-unlock create NAME'");
  }
  try {
    const nlohmann::json& document = parsed.value;
    if (document.at("schema").get<std::string>() != k_installed_shim_schema) {
      throw std::invalid_argument("schema is not " + std::string(k_installed_shim_schema));
    }
    InstalledShim record;
    record.bundle_version = document.at("bundle_version").get<std::string>();
    record.platform = document.at("platform").get<std::string>();
    record.inject_env = document.at("inject_env").get<std::string>();
    record.shim = file_from(document.at("shim"));
    record.external = document.value("external", false);
    if (document.contains("probe")) {
      record.probe = file_from(document.at("probe"));
    }
    for (const nlohmann::json& file : document.at("support")) {
      record.support.push_back(file_from(file));
    }
    return record;
  } catch (const std::exception& e) {
    return Error(ErrorCategory::verification,
                 "reading " + source,
                 e.what(),
                 "reinstall the shim with 'lume-unlock create NAME'");
  }
}

} // namespace lume_unlock::apply
