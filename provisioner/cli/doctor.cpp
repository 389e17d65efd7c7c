#include "doctor.hpp"

#include "cli/bundle_location.hpp"
#include "cli/registry_options.hpp"
#include "lume/client.hpp"
#include "oci/reference.hpp"
#include "oci/registry_client.hpp"
#include "recipe/recipe.hpp"
#include "util/atomic_file.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace lume_unlock::cli {

namespace {

struct DoctorOptions {
  std::optional<std::string> recipe;
  std::optional<std::string> bundle;
  RegistryFlags registry;
};

enum class Verdict { ok, warn, fail, skip };

struct Check {
  std::string name;
  Verdict verdict = Verdict::ok;
  std::string detail;
  std::string fix;
};

const char* verdict_name(Verdict v) {
  switch (v) {
  case Verdict::ok:
    return "ok";
  case Verdict::warn:
    return "warn";
  case Verdict::fail:
    return "fail";
  case Verdict::skip:
    return "skip";
  }
  return "fail";
}

// Images are 50-80 GB and a pull needs room for the whole disk (lume-oci.md §2.3).
constexpr std::uint64_t k_disk_comfortable = 100ULL * 1000 * 1000 * 1000;
constexpr std::uint64_t k_disk_minimum = 40ULL * 1000 * 1000 * 1000;

std::string gigabytes(std::uint64_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return buffer;
}

std::string lume_home() {
  if (const char* home = std::getenv("LUME_HOME"); home != nullptr && *home != '\0') {
    return home;
  }
  const char* user_home = std::getenv("HOME");
  return std::string(user_home != nullptr ? user_home : ".") + "/.lume";
}

Check check_lume(const Context& context) {
  lume::ClientOptions options;
  options.base_url = context.global.lume_url;
  options.get_retries = 0;
  lume::LumeClient client(options);
  auto status = client.host_status();
  if (!status) {
    return {"lume", Verdict::fail, status.error().message(), status.error().hint()};
  }
  auto vms = client.list();
  if (!vms) {
    return {"lume", Verdict::fail, vms.error().message(), vms.error().hint()};
  }
  Check check{"lume",
              Verdict::ok,
              "reachable at " + context.global.lume_url + ": " +
                  std::to_string(vms.value().size()) + " VMs, " +
                  std::to_string(status.value().vm_count) + " of " +
                  std::to_string(status.value().max_vms) + " allowed running",
              ""};
  if (status.value().max_vms > 0 && status.value().vm_count >= status.value().max_vms) {
    check.verdict = Verdict::warn;
    check.fix = "macOS allows two running macOS VMs per host: stop one before 'create'";
  }
  return check;
}

Check check_state_dir(const Context& context) {
  const std::string& dir = context.global.state_dir;
  if (auto made = util::make_directories(dir, 0700); !made) {
    return {"state-dir",
            Verdict::fail,
            made.error().message(),
            "pass a writable --state-dir or set LUME_UNLOCK_STATE_DIR"};
  }
  const std::string probe = dir + "/.doctor-write-test";
  if (auto written = util::write_file_atomic(probe, "ok\n", 0600); !written) {
    return {"state-dir",
            Verdict::fail,
            written.error().message(),
            "pass a writable --state-dir or set LUME_UNLOCK_STATE_DIR"};
  }
  std::remove(probe.c_str());
  return {"state-dir", Verdict::ok, dir + " is writable (keys, host-key pins, records)", ""};
}

Check check_host_preference() {
#ifdef __APPLE__
  // Read-only: lume-unlock never changes the host (DESIGN §8). A constant command, no user input.
  std::FILE* pipe = popen("defaults read com.apple.gpusw.ParavirtualizedGraphics "
                          "ForceUnrestrictedDeviceFeatureLevel 2>/dev/null",
                          "r");
  std::string value;
  if (pipe != nullptr) {
    char buffer[64];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
      value += buffer;
    }
    pclose(pipe);
  }
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) {
    value.pop_back();
  }
  const std::string set_it = "defaults write com.apple.gpusw.ParavirtualizedGraphics "
                             "ForceUnrestrictedDeviceFeatureLevel -bool true (then stop and start "
                             "the VM)";
  if (value == "1") {
    return {"host-preference", Verdict::ok, "ForceUnrestrictedDeviceFeatureLevel is set", ""};
  }
  return {"host-preference",
          Verdict::warn,
          value.empty() ? "ForceUnrestrictedDeviceFeatureLevel is not set"
                        : "ForceUnrestrictedDeviceFeatureLevel is '" + value + "'",
          set_it};
#else
  return {"host-preference",
          Verdict::skip,
          "not macOS: the ParavirtualizedGraphics preference is read on the Mac host",
          ""};
#endif
}

Check check_disk() {
  std::filesystem::path dir = lume_home();
  std::error_code ec;
  while (!dir.empty() && !std::filesystem::exists(dir, ec)) {
    dir = dir.parent_path();
  }
  struct statvfs fs {};
  if (dir.empty() || statvfs(dir.c_str(), &fs) != 0) {
    return {"disk", Verdict::warn, "cannot read free space under " + lume_home(), ""};
  }
  const std::uint64_t free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  const std::string detail = gigabytes(free_bytes) + " free under " + lume_home() + " (LUME_HOME)";
  if (free_bytes < k_disk_minimum) {
    return {"disk",
            Verdict::fail,
            detail,
            "a macOS image needs 50-80 GB: free space or move LUME_HOME"};
  }
  if (free_bytes < k_disk_comfortable) {
    return {"disk",
            Verdict::warn,
            detail,
            "a pull needs room for the whole disk image; 100 GB is comfortable"};
  }
  return {"disk", Verdict::ok, detail, ""};
}

/// The recipe to check: --recipe, else the shipped tahoe-llm.yaml when run from a checkout.
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

Check check_registry(const DoctorOptions& options, std::optional<recipe::Recipe>& loaded) {
  auto path = recipe_to_check(options);
  if (!path) {
    return {"registry", Verdict::skip, "no recipe given", "pass --recipe FILE to check its image"};
  }
  auto r = recipe::load_recipe(*path);
  if (!r) {
    return {"registry", Verdict::fail, r.error().message(), r.error().hint()};
  }
  loaded = r.value();
  if (!loaded->source.image) {
    return {"registry", Verdict::skip, *path + " installs from an IPSW: no image to check", ""};
  }
  auto ref = oci::parse_reference(*loaded->source.image);
  if (!ref) {
    return {"registry", Verdict::fail, ref.error().message(), ref.error().hint()};
  }
  oci::RegistryClient client(registry_client_options(options.registry));
  auto head = client.head_manifest(ref.value());
  if (!head) {
    return {"registry", Verdict::fail, head.error().message(), head.error().hint()};
  }
  return {
      "registry", Verdict::ok, ref.value().str() + " resolves to " + head.value().digest.str(), ""};
}

Check check_bundle(const DoctorOptions& options, const std::optional<recipe::Recipe>& loaded) {
  const BundleLocation location =
      locate_bundle(options.bundle, loaded ? loaded->shim.bundle : std::nullopt);
  std::optional<oci::RegistryClient> registry;
  try {
    // Credentials matter only for a bundle in a registry: a broken Docker config must not turn
    // the check of a local bundle into a failure, nor stop the other checks.
    registry.emplace(location_kind(location.path) == LocationKind::reference
                         ? registry_client_options(options.registry)
                         : oci::RegistryClientOptions{});
  } catch (const Error& e) {
    return {"bundle", Verdict::fail, e.message(), e.hint()};
  }
  auto located = load_located_bundle(location, *registry);
  if (!located) {
    return {"bundle", Verdict::fail, located.error().message(), located.error().hint()};
  }
  const bundle::BundleManifest& manifest = located.value().bundle.manifest();
  std::string platforms;
  for (const auto& [name, entry] : manifest.platforms) {
    platforms += (platforms.empty() ? "" : ", ") + name;
  }
  Check check{"bundle",
              Verdict::ok,
              location.path + " (" + location.source + "): version " + manifest.version +
                  ", files verified, platforms " + platforms,
              ""};
  if (manifest.platforms.count("darwin-arm64") == 0) {
    check.verdict = Verdict::warn;
    check.fix = "macOS guests need the darwin-arm64 entry: build on a Mac, or on Linux with zig "
                "(scripts/bootstrap installs it)";
  }
  return check;
}

int run_doctor(const DoctorOptions& options, Context& context) {
  std::vector<Check> checks;
  checks.push_back(check_lume(context));
  checks.push_back(check_state_dir(context));
  checks.push_back(check_host_preference());
  checks.push_back(check_disk());
  std::optional<recipe::Recipe> loaded;
  checks.push_back(check_registry(options, loaded));
  checks.push_back(check_bundle(options, loaded));

  bool failed = false;
  for (const auto& c : checks) {
    failed = failed || c.verdict == Verdict::fail;
  }
  if (context.json()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : checks) {
      nlohmann::json item = {
          {"name", c.name}, {"status", verdict_name(c.verdict)}, {"detail", c.detail}};
      if (!c.fix.empty()) {
        item["fix"] = c.fix;
      }
      list.push_back(item);
    }
    context.print_json({{"checks", list}, {"ok", !failed}});
  } else {
    for (const auto& c : checks) {
      char name[20];
      std::snprintf(name, sizeof name, "%-16s", c.name.c_str());
      context.out << verdict_name(c.verdict)
                  << std::string(5 - std::string(verdict_name(c.verdict)).size(), ' ') << name
                  << c.detail << '\n';
      if (!c.fix.empty()) {
        context.out << "     " << std::string(16, ' ') << "fix: " << c.fix << '\n';
      }
    }
  }
  return failed ? 1 : 0;
}

} // namespace

void register_doctor(CLI::App& app, Context& context, int& exit_code) {
  auto options = std::make_shared<DoctorOptions>();
  auto* command = app.add_subcommand(
      "doctor", "Check this host: Lume, state dir, host preference, disk, registry, shim bundle");
  command->footer(
      "Each check prints ok, warn, fail or skip, and how to fix it. Exit 1 when any check fails.\n"
      "The host preference is only read, never changed.");
  command->add_option(
      "--recipe",
      options->recipe,
      "Recipe whose image to resolve (default: image-recipes/tahoe-llm.yaml when present)");
  command->add_option(
      "--bundle", options->bundle, "Shim bundle directory, archive or REF@sha256:… to verify");
  add_registry_flags(*command, options->registry);
  command->callback([options, &context, &exit_code] { exit_code = run_doctor(*options, context); });
}

} // namespace lume_unlock::cli
