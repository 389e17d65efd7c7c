#pragma once

#include "enablement/enablement_list.hpp"
#include "guest/guest_layout.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::enablement {

/// What the renderer needs besides the entry and the layout.
struct AgentSettings {
  /// The platform's injection variable, from the shim bundle's "inject_env":
  /// DYLD_INSERT_LIBRARIES (macOS) or LD_PRELOAD (Linux guests).
  std::string inject_variable = "DYLD_INSERT_LIBRARIES";
  /// The profile of entries that have none of their own.
  Profile default_profile = Profile::standard();
};

/// Environment variable names the renderer sets (besides the injection variable).
constexpr const char* k_env_apple_family_max = "LUME_METAL_APPLE_FAMILY_MAX";
constexpr const char* k_env_max_threadgroup_memory = "LUME_METAL_MAX_THREADGROUP_MEMORY";
constexpr const char* k_env_enablement = "LUME_UNLOCK_ENABLEMENT";

/// The LaunchAgent of `entry` as an XML property list (1.0, Apple DOCTYPE):
///   Label                 dev.lume-unlock.<name>
///   ProgramArguments      [program, args…], one <string> per argument, never a shell line
///   EnvironmentVariables  <inject_variable> = layout.shim_path(),
///                         LUME_METAL_APPLE_FAMILY_MAX / LUME_METAL_MAX_THREADGROUP_MEMORY = the
///                         effective profile (decimal), LUME_UNLOCK_ENABLEMENT = the guard file,
///                         plus the entry's own env. For LD_PRELOAD (Linux guests) the shim is
///                         named by file name and its directory given as LD_LIBRARY_PATH, since
///                         glibc splits LD_PRELOAD at the space in "Application Support".
///   RunAtLoad true, KeepAlive = entry.keep_alive,
///   StandardOutPath / StandardErrorPath = layout.stdout_log_path / stderr_log_path.
/// Every string is XML-escaped (& < > " '); dictionary keys are sorted and the layout is fixed,
/// so the same inputs always give the same bytes. Fails (category usage) when the entry is
/// invalid, the injection variable is not a variable name, or the entry's env sets a variable
/// the renderer owns.
Result<std::string> render_launch_agent(const EnablementEntry& entry,
                                        const guest::GuestLayout& layout,
                                        const AgentSettings& settings);

/// The environment an entry's process runs with (the plist's EnvironmentVariables, and what
/// `lume-unlock exec` sets): the injection variable, the profile, the guard file, then the
/// entry's env. Fails as render_launch_agent does.
Result<std::map<std::string, std::string>> agent_environment(const EnablementEntry& entry,
                                                             const guest::GuestLayout& layout,
                                                             const AgentSettings& settings);

/// One rendered agent plist, as the plan writes it and the provenance record names it.
struct RenderedAgent {
  std::string name;
  std::string label;      ///< dev.lume-unlock.<name>
  std::string plist_path; ///< layout.agent_plist_path(name)
  std::string content;    ///< render_launch_agent's bytes
  std::string sha256;     ///< of content
};

/// render_launch_agent for every entry with `agent: true`, in list order. Fails on the first
/// entry that cannot be rendered (see above).
Result<std::vector<RenderedAgent>> render_agents(const EnablementList& list,
                                                 const guest::GuestLayout& layout,
                                                 const AgentSettings& settings);

/// The guard file (DESIGN §4.1, LUME_UNLOCK_ENABLEMENT): a '#' header, then the guarded_path of
/// every entry (agents and exec-only alike), one per line, sorted bytewise, without duplicates,
/// each line ending in '\n'. The shim activates only in a process whose realpath(3) of the
/// executable is listed, so a link's own path (Homebrew's bin/, a venv's python, /tmp) would
/// never match. Expects a validated list (no newline can be in a path).
std::string render_guard_file(const EnablementList& list);

/// One command as a word list; the SSH layer quotes each word with shell_quote() and joins them.
using Argv = std::vector<std::string>;

/// "gui/<uid>": the launchd domain of the logged-in guest user's agents.
std::string gui_domain(std::uint32_t uid);
/// launchctl bootstrap gui/<uid> PLIST: loads (and, with RunAtLoad, starts) an agent.
Argv launchctl_bootstrap(std::uint32_t uid, const std::string& plist_path);
/// launchctl bootout gui/<uid>/LABEL: stops and unloads it.
Argv launchctl_bootout(std::uint32_t uid, const std::string& label);
/// launchctl print gui/<uid>/LABEL: state of a loaded agent; fails when not loaded.
Argv launchctl_print(std::uint32_t uid, const std::string& label);
/// plutil -lint PATH…: checks property lists before they are loaded.
Argv plutil_lint(const std::vector<std::string>& paths);

/// What the guest holds now, as read before planning (one archive of the few small files).
/// Contents rather than only hashes, so a rollback can put back the exact previous bytes.
struct ObservedState {
  std::optional<std::string> enablement_json; ///< bytes of enablement.json; nullopt when absent
  std::optional<std::string> guard_file;      ///< bytes of the guard file; nullopt when absent
  /// Every dev.lume-unlock.*.plist in ~/Library/LaunchAgents: file name → bytes.
  std::map<std::string, std::string> agent_plists;
  /// The labels loaded in gui/<uid> (one `launchctl print gui/<uid>`), when known. With them the
  /// plan also loads unchanged agents that are not loaded, boots out loaded agents of ours that
  /// have no plist any more, and skips booting out agents that are not loaded. Without them every
  /// agent whose plist is unchanged is assumed loaded.
  std::optional<std::set<std::string>> loaded_labels;
};

/// A file the plan writes: uploaded to `staged_path`, checked against `sha256`, later renamed to
/// `path`.
struct FileWrite {
  std::string path;
  std::string staged_path;
  std::string content;
  std::string sha256;
  std::uint32_t mode = 0644;
  /// What to put back on rollback; nullopt when the file did not exist (rollback deletes it).
  std::optional<std::string> previous;
};
bool operator==(const FileWrite& a, const FileWrite& b);

/// A file the plan deletes, with its bytes for rollback.
struct FileRemoval {
  std::string path;
  std::string previous;
};
bool operator==(const FileRemoval& a, const FileRemoval& b);

/// added: new plist; changed: plist bytes differ; removed: no desired agent owns it;
/// not_loaded: plist unchanged but the agent is not loaded (only with loaded_labels).
enum class AgentChange { added, changed, removed, not_loaded };

/// One LaunchAgent that changes. Hashes are empty where they do not apply (no old file for
/// `added` or for a loaded agent whose plist is gone, no new file for `removed`).
struct AgentAction {
  AgentChange change = AgentChange::added;
  std::string name; ///< entry name (for a stray plist: the part between prefix and ".plist")
  std::string label;
  std::string plist_path;
  std::string old_sha256;
  std::string new_sha256;
  /// Whether launchd had it loaded before the apply (true when unknown): decides bootout
  /// before the change and re-bootstrap on rollback.
  bool was_loaded = true;
};
bool operator==(const AgentAction& a, const AgentAction& b);

/// One command of a step; `may_fail` marks commands whose failure is expected and harmless
/// (booting out an agent that is not loaded).
struct Command {
  Argv argv;
  bool may_fail = false;
};
bool operator==(const Command& a, const Command& b);

enum class StepKind {
  make_directories, ///< mkdir -p of the support, staging, LaunchAgents and Logs directories
  stage_files,      ///< upload every file in `files` to its staged_path as ONE batch, verify sha256
  lint_plists,      ///< plutil -lint of the staged plists (one command)
  bootout_agents,   ///< launchctl bootout of changed and removed agents that were loaded, and of
                    ///< added ones whose label is loaded without a plist
  install_files,    ///< mv staged → final for writes, rm for removals (all in one round trip)
  bootstrap_agents, ///< launchctl bootstrap of added, changed and not_loaded agents
  clean_staging,    ///< rm -rf the staging root: this run's directory and what interrupted
                    ///< runs left (the caller holds the VM's lock)
  /// Rollback only: upload `files` straight to their path, then run `commands` (rm of new files).
  restore_files,
};
const char* step_kind_name(StepKind kind);

/// One step of an apply. An executor runs all of a step's commands in one remote invocation
/// (each word quoted with shell_quote(), commands in order) and uploads its `files` as one batch;
/// a failing command that is not `may_fail` fails the step.
struct Step {
  StepKind kind = StepKind::make_directories;
  std::vector<Command> commands;
  std::vector<FileWrite> files;
};

/// The actions that bring the guest from the observed to the desired state, as data.
/// Order of `steps`: make_directories, stage_files, lint_plists, bootout_agents, install_files,
/// bootstrap_agents, clean_staging (steps with nothing to do are left out). Nothing live changes
/// before bootout_agents, the guard file is in place before any agent starts, and a bootout
/// precedes every re-bootstrap (launchd refuses to bootstrap a loaded label).
struct EnablementPlan {
  /// Changed or new files: plists (by path), then the guard file, then enablement.json.
  std::vector<FileWrite> writes;
  std::vector<FileRemoval> removals; ///< plists of removed agents
  std::vector<AgentAction> agents;   ///< by name
  std::vector<Step> steps;
  std::uint32_t uid = 0;    ///< the guest user's id: agents live in gui/<uid>
  std::string staging_dir;  ///< guest::GuestLayout::staging_dir()
  std::string staging_root; ///< guest::GuestLayout::staging_root()

  /// True when the guest already matches: nothing to write, remove, load or unload.
  bool empty() const { return steps.empty(); }

  /// What to run after step `failed` failed, to leave the previous state in place: for a
  /// failure before bootout_agents only the staging directory is removed; later, the new agents
  /// are booted out, previous files restored (new files deleted), previous agents bootstrapped
  /// again (may_fail: some may still be loaded) and the staging directory removed. A failure in
  /// clean_staging needs no rollback (empty result).
  std::vector<Step> rollback_after(StepKind failed) const;

  /// One line per change for --dry-run and logs, e.g. "add agent 'x' (dev.lume-unlock.x)",
  /// "write <path>", "remove <path>".
  std::vector<std::string> describe() const;
};

/// Computes the plan that applies `desired` to a guest observed as `observed`. Every agent entry
/// is rendered (render_launch_agent) and compared byte for byte with its plist; plists in our
/// namespace that no desired agent owns are removed; the guard file and enablement.json are
/// rewritten when their bytes differ. `uid` is the guest user's id (gui/<uid> domain). Fails
/// (category usage) when the list is invalid or an entry cannot be rendered.
Result<EnablementPlan> plan_enablement(const EnablementList& desired,
                                       const guest::GuestLayout& layout,
                                       const AgentSettings& settings,
                                       std::uint32_t uid,
                                       const ObservedState& observed);

} // namespace lume_unlock::enablement
