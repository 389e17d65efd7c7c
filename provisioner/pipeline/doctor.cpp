#include "pipeline/doctor.hpp"

#include "lume/client.hpp"
#include "lume/host_preference.hpp"
#include "oci/reference.hpp"
#include "pipeline/status.hpp"
#include "provenance/provenance.hpp"
#include "recipe/recipe.hpp"
#include "util/atomic_file.hpp"
#include "util/child_process.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace lume_unlock::pipeline {

namespace {

// Images are 50-80 GB and a pull needs room for the whole disk (lume-oci.md §2.3).
constexpr std::uint64_t k_disk_comfortable = 100ULL * 1000 * 1000 * 1000;
constexpr std::uint64_t k_disk_minimum = 40ULL * 1000 * 1000 * 1000;

std::string gigabytes(std::uint64_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return buffer;
}

/// A check that failed with `error`: its message, and its hint as the fix.
DoctorCheck failed(const char* name, const Error& error) {
  return {name, Verdict::fail, error.message(), error.hint()};
}

DoctorCheck check_lume(const DoctorOptions& options, lume::LumeClient& client) {
  auto status = client.host_status();
  if (!status) {
    return failed("lume", status.error());
  }
  auto vms = client.list();
  if (!vms) {
    return failed("lume", vms.error());
  }
  DoctorCheck check{"lume",
                    Verdict::ok,
                    "reachable at " + options.lume_url + ": " + std::to_string(vms.value().size()) +
                        " VMs, " + std::to_string(status.value().vm_count) + " of " +
                        std::to_string(status.value().max_vms) + " allowed running",
                    ""};
  if (status.value().max_vms > 0 && status.value().vm_count >= status.value().max_vms) {
    check.verdict = Verdict::warn;
    check.fix = "macOS allows two running macOS VMs per host: stop one before 'create'";
  }
  return check;
}

/// Whether lume-unlock started `vm` headless: it has a host record, and the recipe that record
/// names (when it still loads) does not ask for VNC with `vm.display: vnc`.
bool started_headless(const DoctorOptions& options, const std::string& vm) {
  auto record = provenance::read_provenance(options.state_dir, vm);
  if (!record.ok()) {
    return false;
  }
  const auto& recipe = record.value().recipe;
  if (recipe && recipe->path) {
    auto loaded = recipe::load_recipe(*recipe->path);
    return !loaded.ok() || !loaded.value().vm.vnc;
  }
  return true;
}

DoctorCheck check_vnc(const DoctorOptions& options, lume::LumeClient& client) {
  auto vms = client.list();
  if (!vms) {
    return {"vnc", Verdict::skip, "cannot list Lume's VMs", vms.error().message()};
  }
  std::vector<std::string> open;
  for (const lume::VmDetails& vm : vms.value()) {
    const std::optional<std::string> listener = vnc_listener(vm);
    if (listener && started_headless(options, vm.name)) {
      open.push_back("'" + vm.name + "' at " + *listener);
    }
  }
  if (open.empty()) {
    return {"vnc", Verdict::ok, "no VM lume-unlock started headless has a VNC listener", ""};
  }
  return {"vnc",
          Verdict::warn,
          "Lume runs a VNC server for " + util::join(open, ", ") +
              ", though lume-unlock started it with \"vnc\": \"disabled\": this Lume predates "
              "the field (0.5.3 ignores it and listens on every interface, trycua/cua#3878)",
          "update Lume past 0.5.3, stop the VM (`lume stop NAME`) and start it again with "
          "`lume-unlock create NAME --recipe FILE`; until then block its port to other hosts "
          "(macOS firewall), or write `vm.display: vnc` in its recipe to keep VNC on purpose"};
}

/// `lume` on PATH, else where Lume's install script puts it (~/.local/bin).
std::optional<std::string> lume_executable() {
  const char* path = std::getenv("PATH");
  std::vector<std::string> dirs;
  std::string rest = path != nullptr ? path : "";
  for (std::size_t colon; (colon = rest.find(':')) != std::string::npos;) {
    dirs.push_back(rest.substr(0, colon));
    rest.erase(0, colon + 1);
  }
  dirs.push_back(rest);
  if (const char* home = std::getenv("HOME")) {
    dirs.push_back(std::string(home) + "/.local/bin");
  }
  for (const std::string& dir : dirs) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/lume";
    if (access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

/// MAJOR.MINOR.PATCH at the start of `text` ("0.5.3", "0.5.4-nightly.20260812"); nothing else.
std::optional<std::array<int, 3>> version_numbers(const std::string& text) {
  std::array<int, 3> v{};
  int used = 0;
  if (std::sscanf(text.c_str(), "%d.%d.%d%n", &v[0], &v[1], &v[2], &used) != 3 || used == 0) {
    return std::nullopt;
  }
  return v;
}

DoctorCheck check_lume_version() {
  const std::optional<std::string> lume = lume_executable();
  if (!lume) {
    return {"lume-version",
            Verdict::skip,
            "no `lume` on PATH or in ~/.local/bin: its version is unknown",
            std::string("lume-unlock needs Lume ") + lume::k_minimum_lume_version + " or newer"};
  }
  auto ran = util::run_child({*lume, "--version"});
  const std::string said =
      util::display_text(ran.ok() ? util::trim(ran.value().stdout_text) : std::string());
  const auto version = version_numbers(said);
  if (!version) {
    return {"lume-version",
            Verdict::warn,
            "`" + *lume + " --version` " +
                (ran.ok() ? "printed no version ('" + said + "')"
                          : "did not run: " + ran.error().message()),
            std::string("lume-unlock needs Lume ") + lume::k_minimum_lume_version + " or newer"};
  }
  const std::string detail = "Lume " + said + " (" + *lume + ")";
  if (*version < *version_numbers(lume::k_minimum_lume_version)) {
    return {"lume-version",
            Verdict::warn,
            detail + " is older than " + lume::k_minimum_lume_version +
                ", the first whose pulls rebuild images that reuse a chunk digest "
                "(trycua/cua#3066)",
            "update Lume: rerun its install script (trycua/cua libs/lume/scripts/install.sh)"};
  }
  return {"lume-version", Verdict::ok, detail, ""};
}

DoctorCheck check_state_dir(const DoctorOptions& options) {
  const std::string& dir = options.state_dir;
  const std::string probe = dir + "/.doctor-write-test";
  auto written = util::make_directories(dir, 0700);
  if (written) {
    written = util::write_file_atomic(probe, "ok\n", 0600);
  }
  if (!written) {
    return {"state-dir",
            Verdict::fail,
            written.error().message(),
            "pass a writable --state-dir or set LUME_UNLOCK_STATE_DIR"};
  }
  std::remove(probe.c_str());
  return {"state-dir", Verdict::ok, dir + " is writable (keys, host-key pins, records)", ""};
}

DoctorCheck check_host_preference() {
  const lume::HostPreference preference = lume::read_host_preference();
  if (!preference.readable) {
    return {"host-preference",
            Verdict::skip,
            "not macOS: the ParavirtualizedGraphics preference is read on the Mac host",
            ""};
  }
  if (preference.set()) {
    return {"host-preference", Verdict::ok, lume::describe_host_preference(preference), ""};
  }
  return {"host-preference",
          Verdict::warn,
          lume::describe_host_preference(preference),
          lume::k_host_preference_fix};
}

DoctorCheck check_disk(lume::LumeClient& client) {
  auto location = lume::default_location_path(client);
  if (!location) {
    return {
        "disk", Verdict::skip, "cannot ask Lume where it keeps VMs", location.error().message()};
  }
  const std::string& lume_home = location.value();
  std::filesystem::path dir = lume_home;
  std::error_code ec;
  while (!dir.empty() && !std::filesystem::exists(dir, ec)) {
    dir = dir.parent_path();
  }
  struct statvfs fs {};
  if (dir.empty() || statvfs(dir.c_str(), &fs) != 0) {
    return {"disk", Verdict::warn, "cannot read free space under " + lume_home, ""};
  }
  const std::uint64_t free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  const std::string detail =
      gigabytes(free_bytes) + " free under " + lume_home + " (Lume's default location)";
  if (free_bytes < k_disk_minimum) {
    return {"disk",
            Verdict::fail,
            detail,
            "a macOS image needs 50-80 GB: free space, or make a roomier location Lume's "
            "default (`lume config storage add`, `lume config storage default`)"};
  }
  if (free_bytes < k_disk_comfortable) {
    return {"disk",
            Verdict::warn,
            detail,
            "a pull needs room for the whole disk image; 100 GB is comfortable"};
  }
  return {"disk", Verdict::ok, detail, ""};
}

/// The recipe to check: the one given, else the shipped tahoe-llm.yaml when run from a checkout.
std::optional<std::string> recipe_to_check(const DoctorOptions& options) {
  if (options.recipe) {
    return options.recipe;
  }
  const std::string shipped = "image-recipes/tahoe-llm.yaml";
  std::error_code ec;
  if (std::filesystem::exists(shipped, ec)) {
    return shipped;
  }
  return std::nullopt;
}

DoctorCheck check_registry(const DoctorOptions& options, std::optional<recipe::Recipe>& loaded) {
  auto path = recipe_to_check(options);
  if (!path) {
    return {"registry", Verdict::skip, "no recipe given", "pass --recipe FILE to check its image"};
  }
  auto r = recipe::load_recipe(*path);
  if (!r) {
    return failed("registry", r.error());
  }
  loaded = r.value();
  if (!loaded->source.image) {
    return {"registry", Verdict::skip, *path + " installs from an IPSW: no image to check", ""};
  }
  auto ref = oci::parse_reference(*loaded->source.image);
  if (!ref) {
    return failed("registry", ref.error());
  }
  oci::RegistryClient client(options.registry_options());
  auto head = client.head_manifest(ref.value());
  if (!head) {
    return failed("registry", head.error());
  }
  return {
      "registry", Verdict::ok, ref.value().str() + " resolves to " + head.value().digest.str(), ""};
}

DoctorCheck check_bundle(const DoctorOptions& options,
                         const std::optional<recipe::Recipe>& loaded) {
  auto located = options.load_bundle(loaded ? loaded->shim.bundle : std::nullopt);
  if (!located) {
    return failed("bundle", located.error());
  }
  const bundle::BundleManifest& manifest = located.value().manifest;
  const std::string platforms =
      util::join(manifest.platforms, ", ", [](const auto& platform) { return platform.first; });
  DoctorCheck check{"bundle",
                    Verdict::ok,
                    located.value().location + ": version " + manifest.version +
                        ", files verified, platforms " + platforms,
                    ""};
  if (manifest.platforms.count("darwin-arm64") == 0) {
    check.verdict = Verdict::warn;
    check.fix = "macOS guests need the darwin-arm64 entry: build on a Mac, or on Linux with zig "
                "(scripts/bootstrap installs it)";
  }
  return check;
}

} // namespace

const char* verdict_name(Verdict verdict) {
  static const char* const names[] = {"ok", "warn", "fail", "skip"};
  return names[static_cast<int>(verdict)];
}

std::vector<DoctorCheck> run_doctor(const DoctorOptions& options) {
  // A client that asks once: the doctor reports an unreachable Lume, it does not wait for it.
  lume::ClientOptions client_options;
  client_options.base_url = options.lume_url;
  client_options.get_retries = 0;
  lume::LumeClient lume(client_options);
  std::vector<DoctorCheck> checks = {check_lume(options, lume),
                                     check_lume_version(),
                                     check_vnc(options, lume),
                                     check_state_dir(options),
                                     check_host_preference(),
                                     check_disk(lume)};
  // The registry check loads the recipe; the bundle check uses its shim.bundle.
  std::optional<recipe::Recipe> loaded;
  checks.push_back(check_registry(options, loaded));
  checks.push_back(check_bundle(options, loaded));
  return checks;
}

} // namespace lume_unlock::pipeline
