#pragma once

#include "apply/enablement_observe.hpp"
#include "apply/programs.hpp"
#include "apply/shim_record.hpp"
#include "enablement/enablement_list.hpp"
#include "enablement/enablement_plan.hpp"
#include "enablement/launch_agent.hpp"
#include "guest/guest_layout.hpp"
#include "guest/guest_records.hpp"
#include "guest/session.hpp"
#include "util/result.hpp"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::apply {

/// The DESIGN §6 checks of `entries` against the guest: ONE command for all of them (the
/// program exists and is an executable file, else category usage naming the entry and the path),
/// then each program's Mach-O headers read over SFTP (read_guest_program) and judged against the
/// installed shim and the guest's macOS version (macho::judge_program). A refused program is an
/// error (refusal(): what stops it and what to do); otherwise the verdicts, in entry order. No
/// command when `entries` is empty.
Result<std::vector<ProgramCheck>>
precheck_entries(guest::GuestSession& session,
                 const std::vector<enablement::EnablementEntry>& entries,
                 const InstalledShim& shim,
                 const std::optional<std::string>& guest_macos = std::nullopt);

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
/// list), prechecks (one command, none when no entry is new or changed compared with
/// `observed`'s enablement.json) the entries that are new or changed, then plans with the
/// resolved list, so the guard file lists real paths and a link that now points elsewhere
/// rewrites it.
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
