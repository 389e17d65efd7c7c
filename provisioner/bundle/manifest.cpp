#include "manifest.hpp"

#include "util/archive.hpp"
#include "util/json_parse.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <set>

namespace lume_unlock::bundle {

namespace {

using nlohmann::json;

Error invalid(const std::string& where, const std::string& what) {
  return Error(ErrorCategory::usage,
               "invalid bundle.json",
               where.empty() ? what : where + ": " + what,
               "rebuild the bundle with 'cmake --build build --target shim-bundle'");
}

/// Rejects keys outside `allowed` and reports the first missing one of `required`.
Status check_keys(const json& object,
                  const std::string& where,
                  const std::set<std::string>& allowed,
                  const std::set<std::string>& required) {
  if (!object.is_object()) {
    return invalid(where, "expected an object");
  }
  for (const auto& item : object.items()) {
    if (allowed.count(item.key()) == 0) {
      return invalid(where, "unknown key '" + item.key() + "'");
    }
  }
  for (const auto& key : required) {
    if (!object.contains(key)) {
      return invalid(where, "missing key '" + key + "'");
    }
  }
  return ok_status();
}

std::string child(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

Result<std::string>
string_at(const json& object, const std::string& where, const std::string& key) {
  const auto& value = object.at(key);
  if (!value.is_string()) {
    return invalid(child(where, key), "expected a string");
  }
  return value.get<std::string>();
}

Result<std::vector<std::string>> parse_slices(const json& value, const std::string& where) {
  if (!value.is_array() || value.empty()) {
    return invalid(where, "expected a non-empty array of slice names");
  }
  std::vector<std::string> slices;
  for (const auto& item : value) {
    const bool name = item.is_string() && !item.get<std::string>().empty() &&
                      item.get<std::string>().find_first_not_of(
                          "abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
    if (!name) {
      return invalid(where, "expected slice names such as 'arm64'");
    }
    if (std::find(slices.begin(), slices.end(), item.get<std::string>()) != slices.end()) {
      return invalid(where, "'" + item.get<std::string>() + "' is listed twice");
    }
    slices.push_back(item.get<std::string>());
  }
  return slices;
}

Result<BundleFile> parse_file(const json& value, const std::string& where) {
  LUME_UNLOCK_TRY(check_keys(value, where, {"path", "sha256", "slices"}, {"path", "sha256"}));
  LUME_UNLOCK_TRY_ASSIGN(auto path, string_at(value, where, "path"));
  LUME_UNLOCK_TRY_ASSIGN(auto digest, string_at(value, where, "sha256"));
  if (auto problem = util::relative_path_problem(path)) {
    return invalid(child(where, "path"), "'" + path + "' " + util::describe(*problem));
  }
  if (util::normalize_relative_path(path) != path) {
    return invalid(child(where, "path"),
                   "'" + path + "' is not written canonically (expected '" +
                       util::normalize_relative_path(path) + "')");
  }
  if (!util::is_sha256_hex(digest)) {
    return invalid(child(where, "sha256"), "'" + digest + "' is not 64 lower-case hex characters");
  }
  BundleFile file{path, digest};
  if (value.contains("slices")) {
    LUME_UNLOCK_TRY_ASSIGN(file.slices, parse_slices(value.at("slices"), child(where, "slices")));
  }
  return file;
}

/// A darwin-<arch> entry's shim and probe, when they list their slices, have <arch>.
Status
check_darwin_slices(const BundleFile& file, const std::string& platform, const std::string& where) {
  const std::string prefix = "darwin-";
  if (!util::starts_with(platform, prefix) || file.slices.empty()) {
    return ok_status();
  }
  const std::string arch = platform.substr(prefix.size());
  if (std::find(file.slices.begin(), file.slices.end(), arch) == file.slices.end()) {
    return invalid(child(where, "slices"), "the " + platform + " file has no " + arch + " slice");
  }
  return ok_status();
}

Result<PlatformEntry>
parse_platform(const json& value, const std::string& name, const std::string& where) {
  // `create` judges the shim by running the probe, so an entry without one cannot be used; say
  // so now, naming the platform, rather than after a VM was created and booted.
  if (value.is_object() && (!value.contains("shim") || !value.contains("probe"))) {
    return invalid(where,
                   std::string("the platform has no ") +
                       (value.contains("shim") ? "probe" : "shim") +
                       " (every platform entry needs a shim and a probe)");
  }
  LUME_UNLOCK_TRY(check_keys(
      value, where, {"inject_env", "shim", "probe", "support"}, {"inject_env", "shim", "probe"}));
  PlatformEntry entry;
  LUME_UNLOCK_TRY_ASSIGN(auto inject, string_at(value, where, "inject_env"));
  if (inject != "DYLD_INSERT_LIBRARIES" && inject != "LD_PRELOAD") {
    return invalid(child(where, "inject_env"),
                   "'" + inject + "' is neither 'DYLD_INSERT_LIBRARIES' nor 'LD_PRELOAD'");
  }
  entry.inject_env = inject;
  LUME_UNLOCK_TRY_ASSIGN(auto shim, parse_file(value.at("shim"), child(where, "shim")));
  entry.shim = shim;
  LUME_UNLOCK_TRY(check_darwin_slices(shim, name, child(where, "shim")));
  if (value.contains("probe")) {
    LUME_UNLOCK_TRY_ASSIGN(auto probe, parse_file(value.at("probe"), child(where, "probe")));
    LUME_UNLOCK_TRY(check_darwin_slices(probe, name, child(where, "probe")));
    entry.probe = probe;
  }
  if (value.contains("support")) {
    const auto& support = value.at("support");
    if (!support.is_array()) {
      return invalid(child(where, "support"), "expected an array");
    }
    for (std::size_t i = 0; i < support.size(); ++i) {
      LUME_UNLOCK_TRY_ASSIGN(
          auto file,
          parse_file(support[i], child(where, "support") + "[" + std::to_string(i) + "]"));
      entry.support.push_back(file);
    }
  }
  return entry;
}

json file_json(const BundleFile& file) {
  json value = {{"path", file.path}, {"sha256", file.sha256}};
  if (!file.slices.empty()) {
    value["slices"] = file.slices;
  }
  return value;
}

} // namespace

std::vector<BundleFile> BundleManifest::files() const {
  std::vector<BundleFile> all;
  for (const auto& [name, entry] : platforms) {
    all.push_back(entry.shim);
    if (entry.probe) {
      all.push_back(*entry.probe);
    }
    all.insert(all.end(), entry.support.begin(), entry.support.end());
  }
  return all;
}

bool is_platform_name(std::string_view name) {
  auto dash = name.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash + 1 == name.size()) {
    return false;
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    bool lower_alnum = std::islower(c) || std::isdigit(c);
    if (i < dash ? !lower_alnum : (i > dash && !lower_alnum && c != '_')) {
      return false;
    }
  }
  return true;
}

bool is_bundle_version(std::string_view version) {
  if (version.empty() || !std::isalnum(static_cast<unsigned char>(version.front()))) {
    return false;
  }
  for (char c : version) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '+' &&
        c != '-') {
      return false;
    }
  }
  return true;
}

Result<BundleManifest> parse_bundle_manifest(std::string_view text) {
  json document = util::parse_json(text).value;
  if (document.is_discarded()) {
    return invalid("", "not valid JSON");
  }
  LUME_UNLOCK_TRY(check_keys(document,
                             "",
                             {"schema", "version", "source_revision", "platforms"},
                             {"schema", "version", "source_revision", "platforms"}));
  LUME_UNLOCK_TRY_ASSIGN(auto schema, string_at(document, "", "schema"));
  if (schema != k_bundle_schema) {
    return invalid("schema", "'" + schema + "' is not '" + k_bundle_schema + "'");
  }
  BundleManifest manifest;
  LUME_UNLOCK_TRY_ASSIGN(auto version, string_at(document, "", "version"));
  if (!is_bundle_version(version)) {
    return invalid("version",
                   "'" + version + "' may only hold letters, digits, '.', '_', '+' and '-'");
  }
  manifest.version = version;
  LUME_UNLOCK_TRY_ASSIGN(auto revision, string_at(document, "", "source_revision"));
  manifest.source_revision = revision;
  const auto& platforms = document.at("platforms");
  if (!platforms.is_object() || platforms.empty()) {
    return invalid("platforms", "expected an object with at least one platform");
  }
  for (const auto& item : platforms.items()) {
    if (!is_platform_name(item.key())) {
      return invalid("platforms",
                     "'" + item.key() + "' is not a platform name like 'darwin-arm64'");
    }
    LUME_UNLOCK_TRY_ASSIGN(auto entry,
                           parse_platform(item.value(), item.key(), "platforms." + item.key()));
    manifest.platforms.emplace(item.key(), entry);
  }
  return manifest;
}

std::string render_bundle_manifest(const BundleManifest& manifest) {
  json platforms = json::object();
  for (const auto& [name, entry] : manifest.platforms) {
    json support = json::array();
    for (const auto& file : entry.support) {
      support.push_back(file_json(file));
    }
    json value = {
        {"inject_env", entry.inject_env}, {"shim", file_json(entry.shim)}, {"support", support}};
    if (entry.probe) {
      value["probe"] = file_json(*entry.probe);
    }
    platforms[name] = value;
  }
  json document = {{"schema", k_bundle_schema},
                   {"version", manifest.version},
                   {"source_revision", manifest.source_revision},
                   {"platforms", platforms}};
  return document.dump(2) + "\n";
}

} // namespace lume_unlock::bundle
