#pragma once

#include "bundle/bundle.hpp"
#include "oci/registry_client.hpp"
#include "util/result.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// How one check of `lume-unlock doctor` came out.
enum class Verdict { ok, warn, fail, skip };

const char* verdict_name(Verdict verdict);

struct DoctorCheck {
  std::string name; ///< what was looked at ("lume", "state-dir", …)
  Verdict verdict = Verdict::ok;
  std::string detail; ///< what was found
  std::string fix;    ///< empty when there is nothing to fix
};

/// The shim bundle the doctor checks: where it is ("PATH (SOURCE)") and its verified manifest.
struct DoctorBundle {
  std::string location;
  bundle::BundleManifest manifest;
};

/// What the doctor looks at, and how it reaches what the command line decides.
struct DoctorOptions {
  std::string lume_url;
  std::string state_dir;
  /// The recipe whose image to resolve; none: image-recipes/tahoe-llm.yaml when it exists
  /// (run from a checkout), else the registry check is skipped.
  std::optional<std::string> recipe;
  /// Registry client options with credentials; throws Error when the Docker config is invalid.
  std::function<oci::RegistryClientOptions()> registry_options;
  /// Locates, loads and verifies the shim bundle, given the recipe's shim.bundle (nullopt
  /// without a recipe or without that key).
  std::function<Result<DoctorBundle>(const std::optional<std::string>& recipe_bundle)> load_bundle;
};

/// Runs every check, in order: lume (reachable, VMs running of those allowed), lume-version
/// (`lume --version` on PATH or in ~/.local/bin: warn below lume::k_minimum_lume_version), vnc
/// (warn for a VM lume-unlock started headless, having its host record, that Lume still reports a
/// vncUrl for: a Lume that ignores `"vnc":"disabled"`), state-dir
/// (writable), host-preference (lume::read_host_preference; skipped off macOS), disk (free space
/// in Lume's default storage location, asked of Lume), registry (the recipe's image resolves) and
/// bundle (loads and verifies, has a darwin-arm64 entry). A failed check is a verdict, not an
/// error; throws Error only when `registry_options` does while the recipe's image is checked.
std::vector<DoctorCheck> run_doctor(const DoctorOptions& options);

} // namespace lume_unlock::pipeline
