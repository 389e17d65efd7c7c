#pragma once

// The enablement list in a guest: its state read in one command (what `allow`, `exec` and
// create's enablement step start from), the target a list is applied with (the installed shim's
// layout and settings), and applying a plan.

#include "apply/programs.hpp"
#include "apply/shim_installer.hpp"
#include "enablement/enablement_list.hpp"
#include "enablement/enablement_plan.hpp"
#include "guest/guest_layout.hpp"
#include "guest/guest_records.hpp"
#include "guest/session.hpp"
#include "util/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::apply {

/// Everything `allow` needs to know about a guest, read with ONE command.
struct GuestEnablement {
  enablement::ObservedState state; ///< enablement.json, guard file, our plists, loaded labels
  std::optional<std::string> shim_record; ///< bytes of shim/current.json, when present
  std::set<std::string> shim_dirs;        ///< names of the directories under shim/
  /// False when `launchctl print gui/<uid>` failed: no user is logged in to the GUI, so launchd
  /// has no gui/<uid> domain to bootstrap agents into.
  bool gui_session = true;
};

/// The largest enablement.json, guard file, shim record or agent plist read from a guest. Ours
/// are a few KiB even with hundreds of entries; a larger one was written by someone else.
inline constexpr std::size_t k_max_observed_file_bytes = 1u << 20;

/// The one observe command for the user whose $HOME is `home` and whose launchd domain is
/// gui/<uid>. It prints records "<tag> <size> <name>\n" followed by <size> bytes: tags
/// enablement, guard, shim-record, plist (name = file name), shim-dir (size 0), labels (the
/// output of `launchctl print gui/<uid>`, when it succeeds) and no-gui (size 0, when it fails).
/// A file over k_max_observed_file_bytes is not sent: "oversize 0 <tag> <size>" stands for it.
Result<std::string> observe_command(const std::string& home, std::uint32_t uid);

/// Parses observe_command()'s output (category guest when it is malformed).
Result<GuestEnablement> parse_observation(std::string_view output);

/// Runs observe_command() (one round trip) and parses it.
Result<GuestEnablement> observe_enablement(guest::GuestSession& session,
                                           const guest::GuestFacts& facts);

/// What the enablement of a guest is computed with: the installed shim's layout and settings.
struct EnablementTarget {
  guest::GuestLayout layout;
  enablement::AgentSettings settings;
  std::uint32_t uid = 0;
  InstalledShim shim;
  /// The guest's `sw_vers -productVersion`: programs built for a newer macOS are refused.
  std::optional<std::string> guest_macos;
};

/// The target for a guest whose shim is installed: parses the shim record, checks that its
/// directory exists, and builds the layout (facts.home, staging in a fresh
/// staging/<random run id>) and settings (its injection variable).
/// When the shim is missing: category guest, "shim not installed", hint `lume-unlock create
/// <vm>`.
Result<EnablementTarget> enablement_target(const GuestEnablement& observed,
                                           const guest::GuestFacts& facts,
                                           const std::string& vm);

/// What `allow` and `exec` read from a guest before they act (2 commands: facts, observe).
struct GuestEnablementView {
  guest::GuestFacts facts;
  GuestEnablement observed;
  EnablementTarget target;
  enablement::EnablementList list; ///< as applied (enablement.json), empty when none
};

/// Gathers facts, observes, and requires an installed shim (see enablement_target).
Result<GuestEnablementView> read_guest_enablement(guest::GuestSession& session,
                                                  const std::string& vm);

/// The list as applied in the guest (enablement.json), or an empty list when there is none.
Result<enablement::EnablementList> applied_list(const GuestEnablement& observed);

/// What an apply did.
struct ApplyReport {
  /// The list as applied: the desired one with each program's real path (resolved_program).
  /// Set by apply_enablement (execute_plan leaves it empty).
  enablement::EnablementList applied;
  bool changed = false;
  std::vector<std::string> changes; ///< EnablementPlan::describe()
  std::vector<ProgramCheck> checks; ///< the verdicts of the programs checked (new or changed)
  std::uint64_t commands = 0;       ///< remote commands run by the apply (prechecks included)
};

/// Runs `plan` in the guest: each step is ONE remote invocation (its commands in order, every
/// word quoted with shell_quote; a failing command that is not may_fail stops the step), the
/// files of stage_files and restore_files go through install_payload(). `launchctl bootstrap`
/// is retried in the guest for up to ~5 s while launchd answers error 5 (Input/output error, for
/// a moment after a bootout of the same label) or 37 (Operation already in progress). On a failure
/// the plan's rollback_after(step) runs (best effort) and the error (category verification for a
/// plist that fails plutil -lint, guest otherwise) names the step, the entry and the guest's
/// message. An empty plan runs nothing.
Result<ApplyReport> execute_plan(guest::GuestSession& session,
                                 const enablement::EnablementPlan& plan);

/// The plan for `desired` and the program verdicts, without changing anything (--dry-run):
/// resolves the real path of every program (resolve_entries: one command, none for an empty
/// list), judges the programs of the entries that are new or changed compared with `observed`'s
/// enablement.json (precheck_entries), then plans with the resolved list, so the guard file lists
/// real paths and a link that now points elsewhere rewrites it.
struct PreparedEnablement {
  enablement::EnablementList list; ///< `desired` with every resolved_program set
  enablement::EnablementPlan plan;
  std::vector<ProgramCheck> checks;
};
Result<PreparedEnablement> prepare_enablement(guest::GuestSession& session,
                                              const enablement::EnablementList& desired,
                                              const EnablementTarget& target,
                                              const GuestEnablement& observed);

/// The GUI-login precheck: when `plan` bootstraps an agent and `observed` saw no gui/<uid>
/// domain, category guest (exit 5) "no user is logged in to the guest's GUI" with how to turn on
/// automatic login. OK otherwise (a plan that only boots out or writes files needs no login).
Status require_gui_session(const enablement::EnablementPlan& plan,
                           const GuestEnablement& observed,
                           std::uint32_t uid);

/// Observe-free convenience for callers that already observed: prepare_enablement(),
/// require_gui_session(), then execute_plan(). Nothing differs → no write command.
Result<ApplyReport> apply_enablement(guest::GuestSession& session,
                                     const enablement::EnablementList& desired,
                                     const EnablementTarget& target,
                                     const GuestEnablement& observed);

} // namespace lume_unlock::apply
