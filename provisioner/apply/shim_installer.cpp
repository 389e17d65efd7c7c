#include "apply/shim_installer.hpp"

#include "bundle/bundle.hpp"
#include "guest/guest_records.hpp"
#include "guest/payload.hpp"
#include "util/atomic_file.hpp"
#include "util/json_reader.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace lume_unlock::apply {

namespace {

using util::base_name;

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

/// The external shim's bytes, read once and checked again: what the guest gets is what the
/// preflight compared with the recipe's digest, even if the file changed since.
Result<std::string> external_bytes(const recipe::VerifiedExternalShim& external) {
  LUME_UNLOCK_TRY_ASSIGN(std::string bytes, util::read_file(external.path));
  const std::string found = util::sha256_hex(bytes);
  if (found != external.sha256) {
    return Error(ErrorCategory::verification,
                 "installing the external shim '" + external.path + "'",
                 "it has SHA-256 " + found + " now, the recipe's shim.sha256 is " + external.sha256,
                 "the file changed after the preflight; nothing was installed");
  }
  return bytes;
}

/// What goes into the guest for `bundle`'s entry `platform`: its record, and each file as (guest
/// path, bundle file), the shim first (with `external`, its dylib is the shim).
struct ShimPlacement {
  InstalledShim record;
  std::vector<std::pair<std::string, bundle::BundleFile>> files;
};

ShimPlacement installed_shim_for(const bundle::LoadedBundle& bundle,
                                 const std::string& platform,
                                 const guest::GuestLayout& layout,
                                 const std::optional<recipe::VerifiedExternalShim>& external) {
  const bundle::PlatformEntry& entry = bundle.manifest().platforms.at(platform);
  ShimPlacement placement;
  InstalledShim& record = placement.record;
  record.bundle_version = bundle.manifest().version;
  record.platform = platform;
  record.inject_env = entry.inject_env;
  record.shim = {layout.shim_path(),
                 external ? external->sha256 : entry.shim.sha256,
                 external ? std::vector<std::string>{} : entry.shim.slices};
  record.external = external.has_value();
  placement.files.emplace_back(layout.shim_path(),
                               external ? bundle::BundleFile{external->path, external->sha256}
                                        : entry.shim);
  // Support libraries go next to the shim (injected processes find them through the shim's
  // directory) and, when there is a probe, next to it too: the probe finds its libraries beside
  // itself ($ORIGIN), so a stock run without injection works.
  std::vector<std::string> support_dirs = {layout.shim_dir()};
  if (entry.probe) {
    record.probe = InstalledFile{layout.probe_path(), entry.probe->sha256};
    support_dirs.push_back(guest::parent_of(layout.probe_path()));
  }
  for (const std::string& dir : support_dirs) {
    for (const bundle::BundleFile& file : entry.support) {
      record.support.push_back({dir + "/" + base_name(file.path), file.sha256});
      placement.files.emplace_back(record.support.back().path, file);
    }
  }
  if (entry.probe) {
    placement.files.emplace_back(layout.probe_path(), *entry.probe);
  }
  return placement;
}

} // namespace

std::string InstalledShim::shim_file_name() const {
  return util::base_name(shim.path);
}

std::string InstalledShim::arch() const {
  const auto dash = platform.find('-');
  return dash == std::string::npos ? platform : platform.substr(dash + 1);
}

const char* InstalledShim::child_rule() const {
  if (external) {
    return "inherit"; // upstream's build never takes itself out of the variable
  }
  if (std::find(shim.slices.begin(), shim.slices.end(), "arm64e") != shim.slices.end()) {
    return "inherit";
  }
  // A darwin shim whose record names no slices may be universal or not; every other platform's
  // shim (the Linux .so) removes itself from the variable at load.
  return util::starts_with(platform, "darwin-") && shim.slices.empty() ? "unknown" : "removed";
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

Result<ShimInstallReport>
install_shim(guest::GuestSession& session,
             const bundle::LoadedBundle& bundle,
             const guest::GuestFacts& facts,
             const std::optional<recipe::VerifiedExternalShim>& external) {
  const std::uint64_t commands_before = session.command_count();
  LUME_UNLOCK_TRY_ASSIGN(auto selected,
                         bundle::select_platform(bundle.manifest(), facts.kernel, facts.machine));
  // The shim: the bundle's, or the recipe's external dylib in its place.
  const bundle::BundleFile shim_file =
      external ? bundle::BundleFile{external->path, external->sha256} : selected.entry.shim;
  LUME_UNLOCK_TRY_ASSIGN(
      auto layout,
      guest::GuestLayout::make(facts.home, shim_file.sha256, base_name(shim_file.path)));
  ShimInstallReport report;
  report.platform = selected.name;
  const ShimPlacement placement = installed_shim_for(bundle, report.platform, layout, external);
  report.installed = placement.record;

  std::vector<guest::PayloadFile> files;
  std::map<std::string, std::string> expected; // guest path → sha256
  for (const auto& [guest_path, file] : placement.files) {
    files.push_back(
        guest::PayloadFile::file(guest_path, bundle.local_path(file), file.sha256, 0755));
    expected[guest_path] = file.sha256;
  }
  if (external) {
    LUME_UNLOCK_TRY_ASSIGN(auto bytes, external_bytes(*external));
    files.front() = guest::PayloadFile::bytes(files.front().path, std::move(bytes), 0755);
  }
  // The record last: install_payload moves files in order, and a reader trusts the record only
  // when it is there.
  const std::string record = render_installed_shim(report.installed);
  const std::string record_path = installed_shim_record_path(facts.home);
  files.push_back(guest::PayloadFile::bytes(record_path, record));
  expected[record_path] = util::sha256_hex(record);

  // Observe: ONE command hashing every expected path (missing ones just do not print).
  std::vector<std::string> paths;
  for (const auto& [path, digest] : expected) {
    paths.push_back(path);
  }
  auto observed = guest::hash_guest_files(session, paths);
  if (!observed.ok()) {
    return observed.error().with_context("checking the installed shim");
  }
  if (observed.value() != expected) {
    auto installed = guest::install_payload(session, files, layout.staging_dir());
    if (!installed.ok()) {
      return installed.error().with_context("installing the shim (" + report.platform + ")");
    }
    report.changed = true;
  }
  report.commands = session.command_count() - commands_before;
  return report;
}

} // namespace lume_unlock::apply
