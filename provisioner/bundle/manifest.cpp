#include "bundle/bundle.hpp"
#include "util/archive.hpp"
#include "util/json_reader.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace lume_unlock::bundle {

namespace {

using nlohmann::json;
using util::JsonObject;
using util::JsonValue;

std::vector<std::string> read_slices(const JsonValue& value) {
  std::vector<std::string> slices = value.strings();
  if (slices.empty()) {
    value.fail("expected a non-empty array of slice names");
  }
  for (std::size_t i = 0; i < slices.size(); ++i) {
    if (slices[i].empty() ||
        slices[i].find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) {
      value.array()[i].fail("expected a slice name such as 'arm64'");
    }
    if (std::find(slices.begin(), slices.begin() + i, slices[i]) != slices.begin() + i) {
      value.array()[i].fail("'" + slices[i] + "' is listed twice");
    }
  }
  return slices;
}

BundleFile read_file(const JsonValue& value) {
  const JsonObject object = value.object().only({"path", "sha256", "slices"});
  const JsonValue path = object.at("path", "a string");
  const JsonValue digest = object.at("sha256", "a string");
  BundleFile file{path.string(), digest.string()};
  if (auto problem = util::relative_path_problem(file.path)) {
    path.fail("'" + file.path + "' " + util::describe(*problem));
  }
  if (util::normalize_relative_path(file.path) != file.path) {
    path.fail("'" + file.path + "' is not written canonically (expected '" +
              util::normalize_relative_path(file.path) + "')");
  }
  if (!util::is_sha256_hex(file.sha256)) {
    digest.fail("'" + file.sha256 + "' is not 64 lower-case hex characters");
  }
  if (const auto slices = object.find("slices")) {
    file.slices = read_slices(*slices);
  }
  return file;
}

/// A darwin-<arch> entry's shim and probe, when they list their slices, have <arch>.
BundleFile
read_platform_file(const JsonObject& entry, const char* key, const std::string& platform) {
  const JsonValue value = entry.at(key, "an object");
  BundleFile file = read_file(value);
  const std::string prefix = "darwin-";
  if (util::starts_with(platform, prefix) && !file.slices.empty()) {
    const std::string arch = platform.substr(prefix.size());
    if (std::find(file.slices.begin(), file.slices.end(), arch) == file.slices.end()) {
      value.object().at("slices").fail("the " + platform + " file has no " + arch + " slice");
    }
  }
  return file;
}

PlatformEntry read_platform(const JsonValue& value, const std::string& name) {
  const JsonObject object = value.object().only({"inject_env", "shim", "probe", "support"});
  // `create` judges the shim by running the probe, so an entry without one cannot be used; say
  // so now, naming the platform, rather than after a VM was created and booted.
  if (!object.has("shim") || !object.has("probe")) {
    value.fail(std::string("the platform has no ") + (object.has("shim") ? "probe" : "shim") +
               " (every platform entry needs a shim and a probe)");
  }
  PlatformEntry entry;
  const JsonValue inject = object.at("inject_env", "a string");
  entry.inject_env = inject.string();
  if (entry.inject_env != "DYLD_INSERT_LIBRARIES" && entry.inject_env != "LD_PRELOAD") {
    inject.fail("'" + entry.inject_env + "' is neither 'DYLD_INSERT_LIBRARIES' nor 'LD_PRELOAD'");
  }
  entry.shim = read_platform_file(object, "shim", name);
  entry.probe = read_platform_file(object, "probe", name);
  if (const auto support = object.find("support")) {
    for (const JsonValue& file : support->array()) {
      entry.support.push_back(read_file(file));
    }
  }
  return entry;
}

BundleManifest read_manifest(const JsonValue& value) {
  const JsonObject document =
      value.object().only({"schema", "version", "source_revision", "platforms"});
  const JsonValue schema = document.at("schema", "a string");
  if (schema.string() != k_bundle_schema) {
    schema.fail("'" + schema.string() + "' is not '" + k_bundle_schema + "'");
  }
  BundleManifest manifest;
  const JsonValue version = document.at("version", "a string");
  manifest.version = version.string();
  if (!is_bundle_version(manifest.version)) {
    version.fail("'" + manifest.version + "' may only hold letters, digits, '.', '_', '+' and '-'");
  }
  manifest.source_revision = document.string("source_revision");
  const JsonObject platforms = document.object("platforms");
  if (platforms.members().empty()) {
    platforms.fail("expected an object with at least one platform");
  }
  for (const auto& [name, entry] : platforms.members()) {
    if (!is_platform_name(name)) {
      entry.fail("'" + name + "' is not a platform name like 'darwin-arm64'");
    }
    manifest.platforms.emplace(name, read_platform(entry, name));
  }
  return manifest;
}

std::string guest_text(std::string_view system, std::string_view arch) {
  return "'" + std::string(system) + " " + std::string(arch) + "'";
}

std::string list_platforms(const BundleManifest& manifest) {
  return util::join(manifest.platforms, ", ", [](const auto& platform) { return platform.first; });
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
  constexpr std::string_view lower_alnum = "abcdefghijklmnopqrstuvwxyz0123456789";
  const auto dash = name.find('-');
  return dash != 0 && dash != std::string_view::npos && dash + 1 != name.size() &&
         name.substr(0, dash).find_first_not_of(lower_alnum) == std::string_view::npos &&
         name.substr(dash + 1).find_first_not_of(std::string(lower_alnum) + "_") ==
             std::string_view::npos;
}

bool is_bundle_version(std::string_view version) {
  return !version.empty() && std::isalnum(static_cast<unsigned char>(version.front())) &&
         version.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                   "0123456789._+-") == std::string_view::npos;
}

Result<BundleManifest> parse_bundle_manifest(std::string_view text) {
  return util::read_json_text(
      text,
      {ErrorCategory::usage,
       "invalid bundle.json",
       "rebuild the bundle with 'cmake --build build --target shim-bundle'"},
      read_manifest);
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

Result<std::string> guest_platform_name(std::string_view system, std::string_view arch) {
  std::string os;
  if (system == "Darwin") {
    os = "darwin";
  } else if (system == "Linux") {
    os = "linux";
  } else {
    return Error(ErrorCategory::verification,
                 "unsupported guest " + guest_text(system, arch),
                 "the shim runs in macOS (Darwin) guests, and in Linux for tests");
  }
  std::string machine(arch);
  if (machine == "aarch64") {
    machine = "arm64";
  } else if (machine == "amd64") {
    machine = "x86_64";
  }
  if (machine.empty()) {
    return Error(ErrorCategory::verification,
                 "unsupported guest " + guest_text(system, arch),
                 "the architecture is empty");
  }
  return os + "-" + machine;
}

Result<SelectedPlatform>
select_platform(const BundleManifest& manifest, std::string_view system, std::string_view arch) {
  auto name = guest_platform_name(system, arch);
  if (!name) {
    return name.error().with_hint("this bundle has " + list_platforms(manifest));
  }
  auto found = manifest.platforms.find(name.value());
  if (found == manifest.platforms.end()) {
    return Error(ErrorCategory::verification,
                 "no shim for guest " + guest_text(system, arch) + " (" + name.value() + ")",
                 "bundle " + manifest.version + " has " + list_platforms(manifest),
                 "use a bundle built with a " + name.value() + " entry");
  }
  return SelectedPlatform{found->first, found->second};
}

} // namespace lume_unlock::bundle
