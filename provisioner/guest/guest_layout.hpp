#pragma once

#include "util/result.hpp"

#include <string>

namespace lume_unlock::guest {

/// Every path lume-unlock uses in the guest (DESIGN §5), computed from the guest user's $HOME
/// (as `echo "$HOME"` printed it, never assumed) and the SHA-256 of the installed shim.
/// Paths contain spaces ("Application Support"): quote every one on a command line.
class GuestLayout {
public:
  /// Checks `home` (absolute, no control characters; trailing '/' removed), `shim_sha256`
  /// (64 lower-case hex) and `shim_file_name` (a plain file name: the bundle platform's shim,
  /// liblume-unlock-shim.dylib on macOS, liblume-unlock-shim.so on Linux guests). Category usage.
  static Result<GuestLayout> make(const std::string& home,
                                  const std::string& shim_sha256,
                                  const std::string& shim_file_name = "liblume-unlock-shim.dylib");

  const std::string& home() const { return m_home; }
  const std::string& shim_sha256() const { return m_shim_sha256; }

  /// <home>/Library/Application Support/LumeUnlock
  std::string support_dir() const;
  /// <support>/shim/<sha256> — content-addressed: an upgrade is a new directory.
  std::string shim_dir() const;
  /// <support>/shim/<sha256>/<shim file name> — what the injection variable points at.
  std::string shim_path() const;
  /// <support>/bin/lume-unlock-probe
  std::string probe_path() const;
  /// <support>/enabled-executables — the guard file (LUME_UNLOCK_ENABLEMENT).
  std::string guard_file_path() const;
  /// <support>/enablement.json — the list as applied.
  std::string enablement_json_path() const;
  /// <support>/staging, or <support>/staging/<run id> for a layout with_run_id(): where an apply
  /// uploads files before renaming them into place (same volume as everything above, so the
  /// rename is atomic). Each run stages in its own directory; the clean step removes the root.
  std::string staging_dir() const;
  /// <support>/staging: the parent of every run's staging directory.
  std::string staging_root() const;
  /// This layout for one run: staging_dir() becomes <support>/staging/<run_id>. `run_id` is a
  /// plain name ([a-z0-9-], e.g. util::random_hex): category usage otherwise.
  Result<GuestLayout> with_run_id(const std::string& run_id) const;
  /// <home>/Library/LaunchAgents
  std::string launch_agents_dir() const;
  /// <home>/Library/LaunchAgents/dev.lume-unlock.<name>.plist
  std::string agent_plist_path(const std::string& name) const;
  /// <home>/Library/Logs/LumeUnlock
  std::string logs_dir() const;
  /// <logs>/<name>.stdout.log and <logs>/<name>.stderr.log
  std::string stdout_log_path(const std::string& name) const;
  std::string stderr_log_path(const std::string& name) const;

private:
  GuestLayout(std::string home, std::string shim_sha256, std::string shim_file_name);

  std::string m_home;
  std::string m_shim_sha256;
  std::string m_shim_file_name;
  std::string m_run_id; ///< empty: the shared staging directory
};

/// <home>/Library/Application Support/LumeUnlock, for callers that do not know the shim's digest
/// yet (they read which shim is installed from there). `home` as GuestLayout::make takes it.
std::string support_dir_of_home(const std::string& home);

/// The folder holding the absolute guest path `path` ("/a/b" -> "/a", "/b" -> "/").
std::string parent_of(const std::string& path);

/// "dev.lume-unlock.<name>": the launchd label of an entry's agent.
std::string agent_label(const std::string& name);

/// "dev.lume-unlock.<name>.plist": the file name of an entry's agent.
std::string agent_plist_file_name(const std::string& name);

/// The entry name in an agent plist file name ("dev.lume-unlock.x.plist" → "x"), or empty when
/// the file is not one of ours.
std::string entry_name_from_plist_file_name(const std::string& file_name);

} // namespace lume_unlock::guest
