#pragma once

#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// The VM `doctor --acceptance` creates and removes unless told another name.
inline constexpr const char* k_acceptance_vm = "lume-unlock-acceptance";

enum class AcceptanceStatus { pass, fail, skipped };

const char* acceptance_status_name(AcceptanceStatus status);

/// What an acceptance run does and with what. Every step runs `executable` (this lume-unlock)
/// as a child process with `--json`; the flag lists are passed on as given.
struct AcceptanceOptions {
  std::string executable;
  /// Global flags every step gets before its command (--lume-url URL, --state-dir DIR, …).
  std::vector<std::string> global_args;
  std::string vm = k_acceptance_vm;
  std::string recipe;
  std::vector<std::string> bundle_args;     ///< --bundle B (preflight and create)
  std::vector<std::string> registry_args;   ///< --registry-ca F, --insecure-registry H (likewise)
  std::vector<std::string> connection_args; ///< --ssh-* (every step that reaches the guest)
  std::string out_dir;
  bool keep = false; ///< leave the VM in place (no remove step), for a look at it afterwards
  /// The values to scrub from everything written to `out_dir` (acceptance_secrets()).
  std::vector<std::string> secrets;
};

/// One step's outcome. File names are relative to the run's folder.
struct AcceptanceStep {
  std::string name;
  AcceptanceStatus status = AcceptanceStatus::skipped;
  std::string detail; ///< why a step failed or was skipped; empty when it passed
  double seconds = 0;
  std::optional<int> exit_status;
  std::vector<std::string> command; ///< as run, scrubbed
  std::string stdout_file;
  std::string stderr_file;
};

/// A whole run: every step of the table in order, and whether the VM was left behind.
struct AcceptanceReport {
  std::string vm;
  std::string out_dir;
  std::vector<AcceptanceStep> steps;
  bool vm_kept = false;
  bool passed() const; ///< no step failed
};

/// What became of the VM: "kept" (--keep, or its remove failed), "removed" or "never created".
const char* vm_outcome(const AcceptanceReport& report);

/// The environment variables whose values an acceptance folder must never hold: the guest
/// password variables (LUME_UNLOCK_GUEST_PASSWORD and `password_env`, --ssh-password-env), the
/// registry credential variables (GHCR_TOKEN, GITHUB_TOKEN, GHCR_USERNAME, GITHUB_USERNAME) and
/// the signing key's passphrase (LUME_UNLOCK_KEY_PASSPHRASE).
std::vector<std::string> acceptance_secret_variables(const std::string& password_env);

/// The values of acceptance_secret_variables(password_env) that are set in this process's
/// environment.
std::vector<std::string> acceptance_secrets(const std::string& password_env);

/// Runs the step table — preflight (doctor), create, verify, bench (the recipe's bench: block
/// and gate), report, remove (--delete-vm) — each as a child process, writing each step's
/// stdout and stderr (`NN-name.stdout`, `NN-name.stderr`), `acceptance.json` and `README.txt`
/// into `out_dir`, every byte scrubbed of `secrets` (files a step wrote there itself, report's,
/// are scrubbed in place afterwards). A failed step skips the ones after it but
/// remove, which runs unless `keep` (and is skipped when no create was tried). `on_step` is told
/// each step's name as it starts. Fails (usage) when the recipe cannot be read or `out_dir`
/// already holds a run, and when a file cannot be written.
Result<AcceptanceReport> run_acceptance(const AcceptanceOptions& options,
                                        const std::function<void(const std::string&)>& on_step);

/// The report as `acceptance.json` and `doctor --acceptance --json` print it.
nlohmann::json to_json(const AcceptanceReport& report);

} // namespace lume_unlock::pipeline
