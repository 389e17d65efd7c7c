#include "apply/enablement_apply.hpp"

#include "apply/programs.hpp"
#include "enablement/launchctl.hpp"
#include "guest/payload.hpp"
#include "guest/shell_quote.hpp"
#include "util/text_check.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace lume_unlock::apply {

namespace {

constexpr const char* k_step_failed_marker = "lume-unlock-step-failed ";

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) {
    text.pop_back();
  }
  return text;
}

bool is_bootstrap(const enablement::Argv& argv) {
  return argv.size() >= 2 && argv[0] == "launchctl" && argv[1] == "bootstrap";
}

/// The entry a command of a step is about (its label or plist path is one of its words), or "".
std::string entry_of(const enablement::EnablementPlan& plan, const enablement::Argv& argv) {
  for (const enablement::AgentAction& agent : plan.agents) {
    for (const std::string& word : argv) {
      if (word == agent.plist_path ||
          word == enablement::gui_domain(plan.uid) + "/" + agent.label ||
          word == plan.staging_dir + "/" + guest::agent_plist_file_name(agent.name)) {
        return agent.name;
      }
    }
  }
  return {};
}

/// One remote invocation running `commands` in order; prints the marker and stops at the first
/// failing command that is not may_fail.
Result<std::string> step_script(const std::vector<enablement::Command>& commands) {
  std::string script =
      "fail() { echo \"" + std::string(k_step_failed_marker) +
      "$1\"; exit 1; }\n"
      "# launchd refuses a bootstrap for a moment after a bootout of the same label (5) or while\n"
      "# it still sets the job up (37); both pass (../shared/reference/mac-realities.md).\n"
      "bootstrap() {\n"
      "  i=0\n"
      "  while :; do\n"
      "    o=$(\"$@\" 2>&1) && return 0\n"
      "    i=$((i + 1))\n"
      "    case $o in *'failed: 5: '* | *'failed: 37: '*) if [ $i -lt 10 ]; then sleep 0.5; "
      "continue; fi ;; "
      "esac\n"
      "    printf '%s\\n' \"$o\" >&2\n"
      "    return 1\n"
      "  done\n"
      "}\n";
  for (std::size_t i = 0; i < commands.size(); ++i) {
    LUME_UNLOCK_TRY_ASSIGN(auto line, guest::shell_join(commands[i].argv));
    const std::string run = (is_bootstrap(commands[i].argv) ? "bootstrap " : "") + line;
    script += commands[i].may_fail ? run + " >/dev/null 2>&1 || :\n"
                                   : run + " || fail " + std::to_string(i) + "\n";
  }
  return script;
}

/// The files of a stage_files (to their staged path) or restore_files step (to their path).
std::vector<guest::PayloadFile> payload_of(const enablement::Step& step) {
  std::vector<guest::PayloadFile> files;
  for (const enablement::FileWrite& write : step.files) {
    const std::string& target = write.staged_path.empty() ? write.path : write.staged_path;
    files.push_back(
        guest::PayloadFile::bytes(target, write.content, static_cast<mode_t>(write.mode)));
  }
  return files;
}

/// Runs one step; the error names the step and, when known, the entry.
Status run_step(guest::GuestSession& session,
                const enablement::EnablementPlan& plan,
                const enablement::Step& step) {
  const std::string step_name = enablement::step_kind_name(step.kind);
  const std::string what = "applying the enablement list: step '" + step_name + "'";
  if (!step.files.empty()) {
    auto installed = guest::install_payload(session, payload_of(step), plan.staging_dir);
    if (!installed.ok()) {
      return installed.error().with_context(what);
    }
  }
  if (step.commands.empty()) {
    return ok_status();
  }
  LUME_UNLOCK_TRY_ASSIGN(auto script, step_script(step.commands));
  auto ran = session.run(script);
  if (!ran.ok()) {
    return ran.error().with_context(what);
  }
  if (ran.value().exit_status == 0) {
    return ok_status();
  }
  std::string entry;
  const std::string& out = ran.value().stdout_text;
  const auto marker = out.rfind(k_step_failed_marker);
  if (marker != std::string::npos) {
    const std::size_t index =
        std::strtoul(out.c_str() + marker + std::string(k_step_failed_marker).size(), nullptr, 10);
    if (index < step.commands.size()) {
      entry = entry_of(plan, step.commands[index].argv);
    }
  }
  const std::string stderr_text = trim(ran.value().stderr_text);
  const bool lint = step.kind == enablement::StepKind::lint_plists;
  return Error(lint ? ErrorCategory::verification : ErrorCategory::guest,
               what + (entry.empty() ? "" : " for " + enablement::entry_label(entry)),
               stderr_text.empty() ? "exit status " + std::to_string(ran.value().exit_status)
                                   : stderr_text);
}

/// One command for all entries: each program exists and is an executable file (category usage
/// naming the entry and the path when not).
Status check_programs_exist(guest::GuestSession& session,
                            const std::vector<enablement::EnablementEntry>& entries) {
  std::string command = "chk() {\n"
                        "  printf 'entry %s\\n' \"$1\"\n"
                        "  if [ ! -e \"$2\" ]; then echo missing; return; fi\n"
                        "  if [ ! -f \"$2\" ] || [ ! -x \"$2\" ]; then echo not-executable; fi\n"
                        "}\n";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    LUME_UNLOCK_TRY_ASSIGN(auto program, guest::shell_quote(entries[i].program));
    command += "chk " + std::to_string(i) + " " + program + "\n";
  }
  auto ran = session.run(command);
  if (!ran.ok()) {
    return ran.error().with_context("checking the programs of the enablement list");
  }
  std::istringstream lines(ran.value().stdout_text);
  std::string line;
  const enablement::EnablementEntry* entry = nullptr;
  std::vector<bool> seen(entries.size(), false);
  while (std::getline(lines, line)) {
    if (line.rfind("entry ", 0) == 0) {
      const std::string digits = line.substr(6);
      const bool numeric =
          !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
      const std::size_t index = numeric ? std::stoul(digits) : entries.size();
      entry = index < entries.size() ? &entries[index] : nullptr;
      if (entry != nullptr) {
        seen[index] = true;
      }
      continue;
    }
    if (entry == nullptr) {
      continue;
    }
    const std::string label = enablement::entry_label(entry->name);
    const std::string program = util::quote_for_message(entry->program);
    if (line == "missing") {
      return Error(ErrorCategory::usage,
                   label,
                   "program " + program + " does not exist in the guest",
                   "install the program first, or give its absolute path with --program");
    }
    if (line == "not-executable") {
      return Error(ErrorCategory::usage,
                   label,
                   "program " + program + " is not an executable file in the guest",
                   "check it with 'lume-unlock ssh NAME -- ls -l " + entry->program + "'");
    }
  }
  if (std::find(seen.begin(), seen.end(), false) != seen.end()) {
    return Error(ErrorCategory::guest,
                 "checking the programs of the enablement list",
                 "the check ended early: " + trim(ran.value().stderr_text),
                 "retry");
  }
  return ok_status();
}

/// Each program's Mach-O headers read over SFTP and judged against the installed shim; a refused
/// program is an error (refusal()), else the verdicts in entry order.
Result<std::vector<ProgramCheck>>
judge_programs(guest::GuestSession& session,
               const std::vector<enablement::EnablementEntry>& entries,
               const InstalledShim& shim,
               const std::optional<std::string>& guest_macos) {
  std::vector<ProgramCheck> checks;
  // Each program's Mach-O headers and signature, read over SFTP (no tool needed in the guest).
  // A program listed by several entries is read once.
  const macho::ShimTarget target = shim_target(shim);
  std::map<std::string, macho::Verdict> verdicts;
  for (const enablement::EnablementEntry& checked : entries) {
    auto known = verdicts.find(checked.program);
    if (known == verdicts.end()) {
      auto image = read_guest_program(session, checked.program);
      if (!image.ok()) {
        return image.error().with_context(enablement::entry_label(checked.name));
      }
      known =
          verdicts
              .emplace(checked.program, macho::judge_program(image.value(), target, guest_macos))
              .first;
    }
    ProgramCheck check{checked.name, checked.program, known->second};
    if (check.verdict.refused()) {
      return refusal(check);
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

} // namespace

Result<std::vector<ProgramCheck>>
precheck_entries(guest::GuestSession& session,
                 const std::vector<enablement::EnablementEntry>& entries,
                 const InstalledShim& shim,
                 const std::optional<std::string>& guest_macos) {
  if (entries.empty()) {
    return std::vector<ProgramCheck>();
  }
  LUME_UNLOCK_TRY(check_programs_exist(session, entries));
  return judge_programs(session, entries, shim, guest_macos);
}

Result<ApplyReport> execute_plan(guest::GuestSession& session,
                                 const enablement::EnablementPlan& plan) {
  ApplyReport report;
  const std::uint64_t before = session.command_count();
  report.changes = plan.describe();
  for (const enablement::Step& step : plan.steps) {
    Status status = run_step(session, plan, step);
    if (status.ok()) {
      continue;
    }
    Error error = status.error();
    std::string rollback_problem;
    for (const enablement::Step& undo : plan.rollback_after(step.kind)) {
      Status undone = run_step(session, plan, undo);
      if (!undone.ok() && rollback_problem.empty()) {
        rollback_problem = undone.error().message();
      }
    }
    if (rollback_problem.empty()) {
      return error.with_hint("the previous enablement was put back; fix the cause and run the "
                             "command again");
    }
    return error.with_hint("rolling back also failed (" + rollback_problem +
                           "); run the command again once the guest is reachable: it converges "
                           "from whatever state the guest is in");
  }
  report.changed = !plan.empty();
  report.commands = session.command_count() - before;
  return report;
}

Result<PreparedEnablement> prepare_enablement(guest::GuestSession& session,
                                              const enablement::EnablementList& desired,
                                              const EnablementTarget& target,
                                              const GuestEnablement& observed) {
  LUME_UNLOCK_TRY(enablement::validate(desired));
  LUME_UNLOCK_TRY_ASSIGN(auto resolved, resolve_entries(session, desired));
  auto previous = applied_list(observed);
  std::vector<enablement::EnablementEntry> to_check;
  for (const enablement::EnablementEntry& entry : resolved.entries) {
    const enablement::EnablementEntry* old =
        previous.ok() ? previous.value().find(entry.name) : nullptr;
    if (old == nullptr || *old != entry) {
      to_check.push_back(entry);
    }
  }
  LUME_UNLOCK_TRY_ASSIGN(auto plan,
                         enablement::plan_enablement(
                             resolved, target.layout, target.settings, target.uid, observed.state));
  LUME_UNLOCK_TRY_ASSIGN(auto checks,
                         precheck_entries(session, to_check, target.shim, target.guest_macos));
  return PreparedEnablement{std::move(resolved), std::move(plan), std::move(checks)};
}

Status require_gui_session(const enablement::EnablementPlan& plan,
                           const GuestEnablement& observed,
                           std::uint32_t uid) {
  if (observed.gui_session) {
    return ok_status();
  }
  for (const enablement::Step& step : plan.steps) {
    for (const enablement::Command& command : step.commands) {
      if (is_bootstrap(command.argv)) {
        return Error(ErrorCategory::guest,
                     "loading the LaunchAgents in " + enablement::gui_domain(uid),
                     "no user is logged in to the guest's GUI ('launchctl print " +
                         enablement::gui_domain(uid) +
                         "' failed), and LaunchAgents run only in a GUI session",
                     "turn on automatic login in the guest (System Settings > Users & Groups > "
                     "Automatically log in as, or 'sudo sysadminctl -autologin set -userName "
                     "USER -password -' there), restart the VM, and run the command again");
      }
    }
  }
  return ok_status();
}

Result<ApplyReport> apply_enablement(guest::GuestSession& session,
                                     const enablement::EnablementList& desired,
                                     const EnablementTarget& target,
                                     const GuestEnablement& observed) {
  const std::uint64_t before = session.command_count();
  LUME_UNLOCK_TRY_ASSIGN(auto prepared, prepare_enablement(session, desired, target, observed));
  LUME_UNLOCK_TRY(require_gui_session(prepared.plan, observed, target.uid));
  auto report = execute_plan(session, prepared.plan);
  if (!report.ok()) {
    return report.error();
  }
  report.value().applied = std::move(prepared.list);
  report.value().checks = prepared.checks;
  report.value().commands = session.command_count() - before;
  return report;
}

} // namespace lume_unlock::apply
