#include "apply/agent_proof.hpp"

#include "enablement/enablement_plan.hpp"
#include "guest/guest_layout.hpp"
#include "guest/guest_records.hpp"
#include "guest/shell_quote.hpp"
#include "util/text.hpp"

#include <map>
#include <sstream>

namespace lume_unlock::apply {

namespace {

// The shim's own lines (shim/runtime/state.c): "[lume-unlock-shim] enabled for <process>
// (appleFamilyMax=… maxThreadgroupMemory=…)" once its hooks are installed, "[lume-unlock-shim]
// not enabled for <process>: <reason>" when installing them failed.
std::string enabled_marker(const std::string& process) {
  return "[lume-unlock-shim] enabled for " + process + " (";
}
std::string not_enabled_marker(const std::string& process) {
  return "[lume-unlock-shim] not enabled for " + process + ":";
}

constexpr const char* k_proof_what = "reading the agents' processes in the guest";
constexpr const char* k_proof_hint =
    "retry; if it persists, look at one agent with 'lume-unlock ssh NAME -- launchctl print "
    "gui/UID/dev.lume-unlock.ENTRY'";

using util::trim;

std::string first_line(const std::string& text) {
  return trim(text.substr(0, text.find('\n')));
}

using util::ends_with;

/// Is the shim among the files lsof listed for `pid`? Nothing when lsof did not list the process.
std::optional<bool>
mapped_in(const AgentObservation& seen, long long pid, const std::string& suffix) {
  if (!seen.lsof_status || *seen.lsof_status != 0) {
    return std::nullopt;
  }
  bool listed = false;
  bool mapped = false;
  std::istringstream lines(seen.lsof_lines);
  for (std::string line; std::getline(lines, line);) {
    listed = listed || line == "p" + std::to_string(pid);
    mapped = mapped || (util::starts_with(line, "n") && ends_with(line, suffix));
  }
  return listed ? std::optional<bool>(mapped) : std::nullopt;
}

std::string lsof_note(const AgentObservation& seen, long long pid) {
  if (!seen.lsof_present) {
    return "lsof is not installed in the guest";
  }
  if (seen.lsof_status && *seen.lsof_status != 0) {
    const std::string why = first_line(seen.lsof_lines);
    return "'lsof -p " + std::to_string(pid) + "' failed (exit " +
           std::to_string(*seen.lsof_status) + (why.empty() ? ")" : "): " + why);
  }
  return "lsof did not list process " + std::to_string(pid);
}

/// The verdict on a process launchd runs.
void judge_running(AgentProof& proof,
                   const AgentExpectation& expected,
                   const AgentObservation& seen) {
  const long long pid = *proof.job.pid;
  const std::string who = "agent '" + proof.entry + "' (pid " + std::to_string(pid) + ")";
  const bool said_enabled =
      proof.shim_line &&
      proof.shim_line->find(enabled_marker(expected.process)) != std::string::npos;
  const bool said_not_enabled =
      proof.shim_line &&
      proof.shim_line->find(not_enabled_marker(expected.process)) != std::string::npos;
  proof.mapped = mapped_in(seen, pid, expected.shim_suffix);
  if (proof.mapped && !*proof.mapped) {
    proof.problem = who + " runs without the shim: lsof lists no …" + expected.shim_suffix +
                    " among its files, so it answers stock whatever llama.cpp prints (launchd did "
                    "not start it with " +
                    expected.inject_variable +
                    ": 'lume-unlock status VM' shows whether its plist drifted)";
    return;
  }
  if (said_not_enabled) {
    proof.problem =
        who + ": the shim's last line in " + expected.stderr_log + " is '" + *proof.shim_line + "'";
    return;
  }
  if (proof.mapped) {
    proof.proof = ShimProof::mapped;
    return;
  }
  proof.lsof_note = lsof_note(seen, pid);
  if (said_enabled) {
    proof.proof = ShimProof::log_line;
    return;
  }
  proof.problem = who + ": nothing shows the shim in it: " + proof.lsof_note + ", and " +
                  expected.stderr_log + " has no '" + enabled_marker(expected.process) + "…' line";
}

Result<std::vector<AgentProof>> prove_agents(guest::GuestSession& session,
                                             const enablement::EnablementList& list,
                                             const EnablementTarget& target) {
  std::vector<enablement::EnablementEntry> agents;
  std::vector<AgentExpectation> expected;
  const std::string suffix =
      "/shim/" + target.shim.shim.sha256 + "/" + target.shim.shim_file_name();
  for (const auto& entry : list.entries) {
    if (!entry.agent) {
      continue;
    }
    const std::string& program = enablement::guarded_path(entry);
    agents.push_back(entry);
    expected.push_back({suffix,
                        util::base_name(program),
                        target.shim.inject_env,
                        target.layout.stderr_log_path(entry.name)});
  }
  std::vector<AgentProof> proofs;
  if (agents.empty()) {
    return proofs;
  }
  LUME_UNLOCK_TRY_ASSIGN(auto command, agent_proof_command(agents, expected, target.uid));
  auto ran = session.run(command);
  if (!ran.ok()) {
    return ran.error().with_context(k_proof_what);
  }
  if (ran.value().exit_status != 0) {
    return Error(ErrorCategory::guest, k_proof_what, trim(ran.value().stderr_text), k_proof_hint);
  }
  LUME_UNLOCK_TRY_ASSIGN(auto observations, parse_agent_proof(ran.value().stdout_text));
  std::map<std::string, const AgentObservation*> by_entry;
  for (const auto& seen : observations) {
    by_entry[seen.entry] = &seen;
  }
  for (std::size_t i = 0; i < agents.size(); ++i) {
    const auto found = by_entry.find(agents[i].name);
    if (found == by_entry.end()) {
      return Error(ErrorCategory::guest,
                   k_proof_what,
                   "the guest reported nothing for agent '" + agents[i].name + "'",
                   k_proof_hint);
    }
    proofs.push_back(judge_agent(agents[i], expected[i], *found->second));
  }
  return proofs;
}

} // namespace

LaunchdJob parse_launchd_job(std::string_view print) {
  LaunchdJob job;
  std::istringstream lines{std::string(print)};
  for (std::string line; std::getline(lines, line);) {
    // Top-level keys are one tab deep; nested blocks (endpoints, environment) are deeper.
    if (line.size() < 2 || line[0] != '\t' || line[1] == '\t') {
      continue;
    }
    const std::size_t equals = line.find(" = ");
    if (equals == std::string::npos) {
      continue;
    }
    const std::string key = line.substr(1, equals - 1);
    const std::string value = trim(line.substr(equals + 3));
    if (key == "state") {
      job.state = value;
    } else if (const auto pid = util::parse_decimal(value);
               key == "pid" && pid && value.size() < 12) {
      job.pid = static_cast<long long>(*pid);
    } else if (key == "last exit code") {
      job.last_exit = value;
    }
  }
  return job;
}

AgentProof judge_agent(const enablement::EnablementEntry& entry,
                       const AgentExpectation& expected,
                       const AgentObservation& seen) {
  AgentProof proof;
  proof.entry = entry.name;
  proof.label = guest::agent_label(entry.name);
  proof.keep_alive = entry.keep_alive;
  if (seen.shim_line && !seen.shim_line->empty()) {
    proof.shim_line = trim(*seen.shim_line);
  }
  proof.loaded = seen.print_status == 0;
  if (!proof.loaded) {
    proof.problem =
        "agent '" + entry.name +
        "' is not loaded in launchd ('launchctl print' said: " + first_line(seen.print) + ")";
    return proof;
  }
  proof.job = parse_launchd_job(seen.print);
  if (proof.job.state == "running" && proof.job.pid) {
    judge_running(proof, expected, seen);
    return proof;
  }
  if (entry.keep_alive) {
    proof.problem = "agent '" + entry.name + "' is not running (state '" + proof.job.state +
                    "', last exit code " + proof.job.last_exit.value_or("unknown") +
                    ") although launchd keeps it alive: see " + expected.stderr_log;
  }
  return proof;
}

Result<std::string> agent_proof_command(const std::vector<enablement::EnablementEntry>& agents,
                                        const std::vector<AgentExpectation>& expected,
                                        std::uint32_t uid) {
  // prove ENTRY TARGET LOG ENABLED NOT_ENABLED SHIM_SUFFIX
  std::string script =
      std::string(guest::k_put_record_function) +
      "l=0; command -v lsof >/dev/null 2>&1 && l=1\n"
      "prove() {\n"
      "  p=$(launchctl print \"$2\" 2>&1); s=$?\n"
      "  put print \"$1 $s\" \"$p\"\n"
      "  pid=$(printf '%s\\n' \"$p\" | sed -n 's/^\tpid = \\([0-9][0-9]*\\)$/\\1/p' "
      "| head -n 1)\n"
      "  if [ -n \"$pid\" ] && [ \"$l\" = 1 ]; then\n"
      "    o=$(lsof -w -p \"$pid\" -Fn 2>&1); s=$?\n"
      "    if [ \"$s\" -eq 0 ]; then\n"
      "      o=$(printf '%s\\n' \"$o\" | grep -x -F \"p$pid\"; "
      "printf '%s\\n' \"$o\" | grep -F -e \"$6\" | head -n 10)\n"
      "    else o=$(printf '%s\\n' \"$o\" | head -n 3); fi\n"
      "    put lsof \"$1 $s\" \"$o\"\n"
      "  elif [ -n \"$pid\" ]; then put no-lsof \"$1\" ''; fi\n"
      "  if [ -f \"$3\" ]; then\n"
      "    put shim-line \"$1\" \"$(grep -a -F -e \"$4\" -e \"$5\" \"$3\" | tail -n 1 "
      "| head -c 4096)\"\n"
      "  fi\n"
      "}\n";
  for (std::size_t i = 0; i < agents.size(); ++i) {
    const std::string target =
        enablement::launchctl_print(uid, guest::agent_label(agents[i].name)).back();
    LUME_UNLOCK_TRY_ASSIGN(auto line,
                           guest::shell_join({agents[i].name,
                                              target,
                                              expected[i].stderr_log,
                                              enabled_marker(expected[i].process),
                                              not_enabled_marker(expected[i].process),
                                              expected[i].shim_suffix}));
    script += "prove " + line + "\n";
  }
  return script + "exit 0\n";
}

Result<std::vector<AgentObservation>> parse_agent_proof(std::string_view output) {
  LUME_UNLOCK_TRY_ASSIGN(auto records,
                         guest::read_guest_records(output, k_proof_what, k_proof_hint));
  std::vector<AgentObservation> observations;
  auto unexpected = [](const guest::GuestRecord& record) {
    return Error(ErrorCategory::guest,
                 k_proof_what,
                 "unexpected record '" + record.tag + " " + record.name + "'",
                 k_proof_hint);
  };
  for (guest::GuestRecord& record : records) {
    std::istringstream words(record.name);
    std::string entry;
    int status = -1;
    words >> entry;
    if (record.tag == "print" && (words >> status)) {
      observations.push_back(AgentObservation{});
      observations.back().entry = entry;
      observations.back().print_status = status;
      observations.back().print = std::move(record.content);
      continue;
    }
    if (observations.empty() || observations.back().entry != entry) {
      return unexpected(record);
    }
    AgentObservation& seen = observations.back();
    if (record.tag == "lsof" && (words >> status)) {
      seen.lsof_status = status;
      seen.lsof_lines = std::move(record.content);
    } else if (record.tag == "no-lsof") {
      seen.lsof_present = false;
    } else if (record.tag == "shim-line") {
      seen.shim_line = std::move(record.content);
    } else {
      return unexpected(record);
    }
  }
  return observations;
}

ChildRuleInForce child_rule_in_force(const InstalledShim& shim, const nlohmann::json& unlocked) {
  if (unlocked.is_object() && unlocked.contains("shim") && unlocked["shim"].is_object()) {
    const nlohmann::json& said = unlocked["shim"].value("children", nlohmann::json());
    if (said == "inherit" || said == "removed") {
      return {said.get<std::string>(), "probe"};
    }
  }
  return {shim.child_rule(), shim.external ? "external shim" : "shim record"};
}

std::string describe_child_rule(const std::string& rule, const std::string& inject_variable) {
  if (rule == "inherit") {
    return "children keep " + inject_variable + "; the guard file decides per executable";
  }
  if (rule == "removed") {
    return "the shim removes itself from " + inject_variable + " at load: children start stock";
  }
  return "the shim record lists no slices; reinstall it with 'lume-unlock create' to know";
}

std::string describe(const AgentProof& proof) {
  if (!proof.loaded) {
    return "agent not loaded in launchd";
  }
  if (!proof.job.pid || proof.job.state != "running") {
    return "agent not running (state '" + proof.job.state + "', last exit code " +
           proof.job.last_exit.value_or("unknown") + ")" +
           (proof.keep_alive ? "" : ", not kept alive: nothing to check");
  }
  std::string text = "agent running (pid " + std::to_string(*proof.job.pid) + "), ";
  if (proof.proof == ShimProof::mapped) {
    return text + "the shim is mapped in it (lsof)";
  }
  if (proof.proof == ShimProof::log_line) {
    return text + "the shim's line is in its log (" + proof.lsof_note + ")";
  }
  return text + (proof.mapped && !*proof.mapped ? "WITHOUT the shim" : "no proof of the shim");
}

nlohmann::json to_json(const AgentProof& proof) {
  auto or_null = [](const auto& value) {
    return value ? nlohmann::json(*value) : nlohmann::json();
  };
  const char* proof_name = proof.proof == ShimProof::mapped     ? "mapped"
                           : proof.proof == ShimProof::log_line ? "log-line"
                                                                : nullptr;
  return {{"entry", proof.entry},
          {"label", proof.label},
          {"keep_alive", proof.keep_alive},
          {"loaded", proof.loaded},
          {"state", proof.loaded ? nlohmann::json(proof.job.state) : nlohmann::json()},
          {"pid", or_null(proof.job.pid)},
          {"last_exit", or_null(proof.job.last_exit)},
          {"shim_mapped", or_null(proof.mapped)},
          {"shim_line", or_null(proof.shim_line)},
          {"proof", proof_name ? nlohmann::json(proof_name) : nlohmann::json()},
          {"problem", or_null(proof.problem)}};
}

Result<std::vector<EntryCheck>> check_entries(guest::GuestSession& session,
                                              const GuestEnablement& observed,
                                              const EnablementTarget& target,
                                              const nlohmann::json& unlocked_probe) {
  LUME_UNLOCK_TRY_ASSIGN(auto list, applied_list(observed));
  LUME_UNLOCK_TRY_ASSIGN(auto proofs, prove_agents(session, list, target));
  const ChildRuleInForce children = child_rule_in_force(target.shim, unlocked_probe);
  std::vector<EntryCheck> checks;
  std::size_t next_proof = 0;
  for (const auto& entry : list.entries) {
    EntryCheck check{entry.name, entry.agent, children, std::nullopt};
    if (entry.agent) {
      check.process = proofs.at(next_proof++);
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

std::string describe(const EntryCheck& check, const std::string& inject_variable) {
  const std::string meaning =
      check.children.source == "external shim"
          ? "children keep " + inject_variable + "; the external dylib reads no guard file"
          : describe_child_rule(check.children.rule, inject_variable);
  return (check.process ? describe(*check.process) + "; " : std::string()) +
         "children: " + check.children.rule + " (" + meaning + ")";
}

nlohmann::json to_json(const EntryCheck& check) {
  return {{"name", check.name},
          {"agent", check.agent},
          {"children", {{"rule", check.children.rule}, {"source", check.children.source}}},
          {"process", check.process ? to_json(*check.process) : nlohmann::json()}};
}

} // namespace lume_unlock::apply
