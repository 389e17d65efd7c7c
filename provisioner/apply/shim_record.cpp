#include "apply/shim_record.hpp"

#include "guest/guest_layout.hpp"
#include "util/json_reader.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

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

InstalledFile file_from(const util::JsonValue& value) {
  const util::JsonObject object = value.object();
  const util::JsonValue path = object.at("path", "a string");
  const util::JsonValue sha256 = object.at("sha256", "a string");
  InstalledFile file{path.string(), sha256.string()};
  if (file.path.empty() || file.path[0] != '/') {
    path.fail("expected an absolute guest path, got " + util::quote_for_message(file.path));
  }
  if (!util::is_sha256_hex(file.sha256)) {
    sha256.fail("expected 64 lower-case hex characters, got " +
                util::quote_for_message(file.sha256));
  }
  if (const auto slices = object.find("slices")) {
    file.slices = slices->strings();
  }
  return file;
}

InstalledShim read_record(const util::JsonValue& value) {
  const util::JsonObject document = value.object();
  const util::JsonValue schema = document.at("schema", "a string");
  if (schema.string() != k_installed_shim_schema) {
    schema.fail("expected '" + std::string(k_installed_shim_schema) + "', got " +
                util::quote_for_message(schema.string()));
  }
  InstalledShim record;
  record.bundle_version = document.string("bundle_version");
  record.platform = document.string("platform");
  record.inject_env = document.string("inject_env");
  record.shim = file_from(document.at("shim", "an object"));
  record.external = document.optional("external", &util::JsonValue::boolean).value_or(false);
  if (const auto probe = document.find("probe")) {
    record.probe = file_from(*probe);
  }
  for (const util::JsonValue& file : document.array("support")) {
    record.support.push_back(file_from(file));
  }
  return record;
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
  return util::read_json_text(text,
                              {ErrorCategory::verification,
                               "reading " + source,
                               "reinstall the shim with 'lume-unlock create NAME'"},
                              read_record);
}

} // namespace lume_unlock::apply
