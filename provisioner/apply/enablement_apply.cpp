#include "apply/enablement_apply.hpp"

#include "enablement/enablement_list.hpp"
#include "enablement/enablement_plan.hpp"
#include "guest/guest_records.hpp"
#include "guest/payload.hpp"
#include "guest/shell_quote.hpp"
#include "util/size.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <sstream>
#include <vector>

namespace lume_unlock::apply {

namespace {

using util::trim;

constexpr const char* k_observe_what = "reading the enablement state of the guest";
constexpr const char* k_observe_hint =
    "retry; if it persists, check the guest with 'lume-unlock ssh NAME -- ls -la "
    "~/Library/LaunchAgents'";

Error observe_error(const std::string& why) {
  return Error(ErrorCategory::guest, k_observe_what, why, k_observe_hint);
}

std::vector<std::string> split_words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  std::string word;
  while (in >> word) {
    words.push_back(word);
  }
  return words;
}

std::set<std::string> loaded_labels_in(std::string_view launchctl_print) {
  std::set<std::string> labels;
  std::istringstream lines{std::string(launchctl_print)};
  std::string line;
  int depth = 0; // 0 outside, 1 inside the services block, >1 nested in it
  const std::string prefix = guest::agent_label("");
  while (std::getline(lines, line)) {
    const std::vector<std::string> words = split_words(line);
    if (depth == 0) {
      if (words.size() == 3 && words[0] == "services" && words[1] == "=" && words[2] == "{") {
        depth = 1;
      }
      continue;
    }
    if (!words.empty() && words.back() == "{") {
      ++depth;
      continue;
    }
    if (words.size() == 1 && words[0] == "}") {
      --depth;
      continue;
    }
    if (depth == 1 && !words.empty() && util::starts_with(words.back(), prefix)) {
      labels.insert(words.back());
    }
  }
  return labels;
}

} // namespace

Result<std::string> observe_command(const std::string& home, std::uint32_t uid) {
  const std::string support = guest::support_dir_of_home(home);
  LUME_UNLOCK_TRY_ASSIGN(auto enablement_json, guest::shell_quote(support + "/enablement.json"));
  LUME_UNLOCK_TRY_ASSIGN(auto guard, guest::shell_quote(support + "/enabled-executables"));
  LUME_UNLOCK_TRY_ASSIGN(auto record, guest::shell_quote(installed_shim_record_path(home)));
  LUME_UNLOCK_TRY_ASSIGN(auto agents, guest::shell_quote(home + "/Library/LaunchAgents"));
  LUME_UNLOCK_TRY_ASSIGN(auto shims, guest::shell_quote(support + "/shim"));
  // `head -c` sends exactly the size announced even when the file grows meanwhile. $((s))
  // trims the spaces macOS's wc pads with (no `tr`: one process less per agent, and a hundred
  // agents are a hundred plists), and makes a file that vanished before wc read it size 0.
  return "emit() {\n"
         "  [ -f \"$2\" ] || return 0\n"
         "  s=$(wc -c <\"$2\"); s=$((s))\n"
         "  if [ \"$s\" -gt " +
         std::to_string(k_max_observed_file_bytes) +
         " ]; then printf 'oversize 0 %s %s\\n' \"$1\" \"$s\"; return 0; fi\n"
         "  printf '%s %s %s\\n' \"$1\" \"$s\" \"$3\"; head -c \"$s\" \"$2\"\n"
         "}\n" +
         "emit enablement " + enablement_json + " -\n" + "emit guard " + guard + " -\n" +
         "emit shim-record " + record + " -\n" + "for f in " + agents +
         "/dev.lume-unlock.*.plist; do\n"
         "  n=${f##*/}\n"
         "  case $n in *[!A-Za-z0-9._-]*) continue ;; esac\n"
         "  emit plist \"$f\" \"$n\"\n"
         "done\n"
         "for d in " +
         shims +
         "/*/; do\n"
         "  [ -d \"$d\" ] || continue\n"
         "  d=${d%/}; n=${d##*/}\n"
         "  case $n in *[!A-Za-z0-9._-]*) continue ;; esac\n"
         "  printf 'shim-dir 0 %s\\n' \"$n\"\n"
         "done\n"
         "if l=$(launchctl print gui/" +
         std::to_string(uid) +
         " 2>/dev/null); then\n"
         "  n=$(printf '%s' \"$l\" | wc -c); printf 'labels %s -\\n' $((n)); printf '%s' \"$l\"\n"
         "else\n"
         "  printf 'no-gui 0 -\\n'\n"
         "fi\n"
         "exit 0\n";
}

Result<GuestEnablement> parse_observation(std::string_view output) {
  LUME_UNLOCK_TRY_ASSIGN(auto records,
                         guest::read_guest_records(output, k_observe_what, k_observe_hint));
  GuestEnablement observed;
  for (guest::GuestRecord& record : records) {
    const std::string& tag = record.tag;
    const std::string& name = record.name;
    std::string& content = record.content;
    if (tag == "enablement") {
      observed.state.enablement_json = std::move(content);
    } else if (tag == "guard") {
      observed.state.guard_file = std::move(content);
    } else if (tag == "shim-record") {
      observed.shim_record = std::move(content);
    } else if (tag == "plist") {
      observed.state.agent_plists[name] = std::move(content);
    } else if (tag == "shim-dir") {
      observed.shim_dirs.insert(name);
    } else if (tag == "oversize") {
      const std::size_t space = name.find(' ');
      const std::string bytes = space == std::string::npos ? "" : name.substr(space + 1);
      if (!util::parse_decimal(bytes)) {
        return observe_error("unexpected output line " +
                             util::quote_for_message(tag + " 0 " + name));
      }
      return Error(ErrorCategory::guest,
                   "reading the enablement state of the guest",
                   "its " + name.substr(0, space) + " file is " + bytes + " bytes, more than the " +
                       util::describe_limit(k_max_observed_file_bytes) + " lume-unlock reads",
                   "lume-unlock never writes such a file: move it aside in the guest "
                   "('lume-unlock ssh NAME -- mv FILE FILE.aside'), then run 'lume-unlock create' "
                   "again to rewrite it");
    } else if (tag == "no-gui") {
      observed.gui_session = false;
    } else if (tag == "labels") {
      observed.state.loaded_labels = loaded_labels_in(content);
    } else {
      return observe_error("unknown record " + util::quote_for_message(tag));
    }
  }
  return observed;
}

Result<GuestEnablement> observe_enablement(guest::GuestSession& session,
                                           const guest::GuestFacts& facts) {
  LUME_UNLOCK_TRY_ASSIGN(auto command,
                         observe_command(facts.home, static_cast<std::uint32_t>(facts.uid)));
  auto ran = session.run(command);
  if (!ran.ok()) {
    return ran.error().with_context("reading the enablement state");
  }
  if (ran.value().exit_status != 0) {
    return observe_error(trim(ran.value().stderr_text));
  }
  return parse_observation(ran.value().stdout_text);
}

Result<EnablementTarget> enablement_target(const GuestEnablement& observed,
                                           const guest::GuestFacts& facts,
                                           const std::string& vm) {
  const std::string hint = "install it with 'lume-unlock create " + vm + "'";
  const std::string what = "enablement list of VM " + util::quote_for_message(vm);
  if (!observed.shim_record) {
    return Error(ErrorCategory::guest,
                 what,
                 "the shim is not installed in the guest (no " +
                     installed_shim_record_path(facts.home) + ")",
                 hint);
  }
  LUME_UNLOCK_TRY_ASSIGN(
      auto shim,
      parse_installed_shim(*observed.shim_record, installed_shim_record_path(facts.home)));
  if (observed.shim_dirs.count(shim.shim.sha256) == 0) {
    return Error(ErrorCategory::guest,
                 what,
                 "the shim is not installed in the guest (its directory shim/" + shim.shim.sha256 +
                     " is missing)",
                 hint);
  }
  LUME_UNLOCK_TRY_ASSIGN(
      auto shared_layout,
      guest::GuestLayout::make(facts.home, shim.shim.sha256, shim.shim_file_name()));
  // Each run stages in its own directory, so concurrent runs never remove each other's files.
  LUME_UNLOCK_TRY_ASSIGN(auto layout, shared_layout.with_run_id(util::random_hex(16)));
  enablement::AgentSettings settings;
  settings.inject_variable = shim.inject_env;
  return EnablementTarget{
      layout, settings, static_cast<std::uint32_t>(facts.uid), shim, facts.product_version};
}

Result<enablement::EnablementList> applied_list(const GuestEnablement& observed) {
  if (!observed.state.enablement_json) {
    return enablement::EnablementList{};
  }
  return enablement::parse_enablement_json(*observed.state.enablement_json, "enablement.json");
}

Result<GuestEnablementView> read_guest_enablement(guest::GuestSession& session,
                                                  const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(auto facts, guest::gather_guest_facts(session));
  LUME_UNLOCK_TRY_ASSIGN(auto observed, observe_enablement(session, facts));
  LUME_UNLOCK_TRY_ASSIGN(auto target, enablement_target(observed, facts, vm));
  LUME_UNLOCK_TRY_ASSIGN(auto list, applied_list(observed));
  return GuestEnablementView{facts, observed, target, list};
}

namespace {

constexpr const char* k_step_failed_marker = "lume-unlock-step-failed ";

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

} // namespace

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
  const auto previous = applied_list(observed);
  const enablement::EnablementList* applied = previous.ok() ? &previous.value() : nullptr;
  LUME_UNLOCK_TRY_ASSIGN(auto resolved, resolve_entries(session, desired, applied));
  std::vector<enablement::EnablementEntry> to_check;
  for (const enablement::EnablementEntry& entry : resolved.entries) {
    const enablement::EnablementEntry* old = applied ? applied->find(entry.name) : nullptr;
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
