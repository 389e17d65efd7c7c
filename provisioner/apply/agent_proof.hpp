#pragma once

// Proof that each running agent is unlocked (issue 43 §4): launchd runs its process, and the shim
// is in that process — mapped into it (`lsof -p PID`, a stock macOS tool), or, when that cannot
// be read, the shim's success line for the process in the agent's stderr log. Read with ONE guest
// command for every agent; judged here, so that a process running without the shim fails
// `verify` whatever llama.cpp printed.

#include "apply/enablement_apply.hpp"
#include "apply/shim_installer.hpp"
#include "enablement/enablement_list.hpp"
#include "guest/session.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lume_unlock::apply {

/// What `launchctl print gui/<uid>/<label>` says about a loaded job: its top-level (one tab deep)
/// `state = …`, `pid = …` (only while a process runs) and `last exit code = …` lines.
struct LaunchdJob {
  std::string state;                    ///< "running", "not running", "spawn scheduled", …
  std::optional<long long> pid;         ///< absent when no process runs
  std::optional<std::string> last_exit; ///< "0", "78: EX_CONFIG", "(never exited)"
};

/// Reads the job's top-level lines; nested blocks (endpoints, environment) are skipped.
LaunchdJob parse_launchd_job(std::string_view print);

/// What the guest reported for one agent.
struct AgentObservation {
  std::string entry;
  int print_status = -1; ///< exit status of `launchctl print` (113: not loaded)
  std::string print;     ///< its output (stdout and stderr)
  bool lsof_present = true;
  std::optional<int> lsof_status;       ///< absent when lsof did not run (no pid, or no lsof)
  std::string lsof_lines;               ///< `p<pid>` and the `n…` lines naming the shim
  std::optional<std::string> shim_line; ///< the shim's last line for this process in the log
};

/// How the shim was found in the process.
enum class ShimProof { mapped, log_line, none };

/// The verdict on one enablement entry's running agent.
struct AgentProof {
  std::string entry;
  std::string label;
  bool keep_alive = true;
  bool loaded = false;
  LaunchdJob job;
  std::optional<bool> mapped; ///< lsof listed the process: is the shim among its files?
  std::string lsof_note;      ///< why `mapped` is unknown, when it is
  std::optional<std::string> shim_line;
  ShimProof proof = ShimProof::none;
  std::optional<std::string> problem; ///< set: verify fails, naming the agent
};

/// What the agents are checked against: the shim's file as lsof names it (its content-addressed
/// tail "/shim/<sha256>/<file>", so a $HOME reached through a link still matches), and the process
/// name the shim writes in its lines (the program's real path's last component).
struct AgentExpectation {
  std::string shim_suffix;
  std::string process;
  std::string inject_variable;
  std::string stderr_log;
};

/// Judges one agent from what the guest reported. Pure.
AgentProof judge_agent(const enablement::EnablementEntry& entry,
                       const AgentExpectation& expected,
                       const AgentObservation& seen);

/// The one guest command: for each agent, `launchctl print`, `lsof -p PID -Fn` filtered to the
/// shim's lines, and the shim's last line for the process in its stderr log, as records
/// (guest/guest_records.hpp).
Result<std::string> agent_proof_command(const std::vector<enablement::EnablementEntry>& agents,
                                        const std::vector<AgentExpectation>& expected,
                                        std::uint32_t uid);

/// Parses agent_proof_command()'s output into one observation per agent (category guest when it
/// is malformed).
Result<std::vector<AgentObservation>> parse_agent_proof(std::string_view output);

/// The child rule in force for the guest's shim and where it was read: the unlocked probe's
/// `shim.children` when it reports one (the dylib's own word), else the shim record's slices.
struct ChildRuleInForce {
  std::string rule;   ///< "inherit", "removed", "unknown"
  std::string source; ///< "probe", "shim record" or "external shim"
};
ChildRuleInForce child_rule_in_force(const InstalledShim& shim, const nlohmann::json& unlocked);

/// One sentence on what the rule means ("children keep DYLD_INSERT_LIBRARIES; the guard file
/// decides per executable").
std::string describe_child_rule(const std::string& rule, const std::string& inject_variable);

/// One enablement entry as `verify` reports it: the child rule in force, and for an agent the
/// proof that its process is unlocked.
struct EntryCheck {
  std::string name;
  bool agent = false;
  ChildRuleInForce children;
  std::optional<AgentProof> process; ///< agents only
};

/// Every entry of the list applied in the guest (`observed`'s enablement.json), its agents checked
/// with one command (none without agents), the child rule from child_rule_in_force.
Result<std::vector<EntryCheck>> check_entries(guest::GuestSession& session,
                                              const GuestEnablement& observed,
                                              const EnablementTarget& target,
                                              const nlohmann::json& unlocked_probe);

/// "agent running (pid 4242), the shim is mapped in it (lsof); children: removed (…)".
std::string describe(const EntryCheck& check, const std::string& inject_variable);

/// {name, agent, children: {rule, source}, process: to_json(AgentProof) or null}.
nlohmann::json to_json(const EntryCheck& check);

/// "agent running (pid 4242), the shim is mapped in it (lsof)" and the like.
std::string describe(const AgentProof& proof);

/// {entry, label, keep_alive, loaded, state, pid, last_exit, shim_mapped, shim_line, proof,
/// problem}; absent values are null.
nlohmann::json to_json(const AgentProof& proof);

} // namespace lume_unlock::apply
