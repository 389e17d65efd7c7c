#include "apply/shim_installer.hpp"

#include "bundle/bundle.hpp"
#include "guest/guest_records.hpp"
#include "guest/payload.hpp"
#include "guest/shell_quote.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"
#include "util/text.hpp"

#include <map>
#include <sstream>

namespace lume_unlock::apply {

namespace {

using util::base_name;

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

} // namespace

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
    support_dirs.push_back(layout.probe_path().substr(0, layout.probe_path().find_last_of('/')));
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
