#include "pipeline/verify.hpp"

#include "apply/enablement_apply.hpp"
#include "guest/guest_records.hpp"
#include "pipeline/vm_state.hpp"
#include "provenance/provenance.hpp"
#include "verify/llama_log.hpp"

namespace lume_unlock::pipeline {

namespace {

/// Why the log's last run does not show the shim working: anything but fast, or shim-enabled
/// (the shim's success line where llama.cpp's verbosity hid the capability block).
std::optional<std::string> llama_log_problem(const VerifiedLog& log) {
  const verify::LlamaLogReport& report = log.report;
  const std::string is =
      "the llama.cpp log '" + log.path + "' is '" + verify::verdict_name(report.verdict) + "'";
  switch (report.verdict) {
  case verify::LlamaLogVerdict::fast:
  case verify::LlamaLogVerdict::shim_enabled:
    return std::nullopt;
  case verify::LlamaLogVerdict::broken:
    return report.failures.empty()
               ? is
               : is + ": " + verify::describe_failure(report.failures.front(), report.run.process);
  default:
    return is + ", not 'fast'";
  }
}

std::vector<std::string> problems_of(const VerifyFindings& found,
                                     const std::optional<VerifiedLog>& log) {
  std::vector<std::string> problems = found.verdict.problems;
  for (const auto& entry : found.entries) {
    if (entry.process && entry.process->problem) {
      problems.push_back(*entry.process->problem);
    }
  }
  for (const auto& item : found.artifact_checks) {
    if (!item.ok()) {
      problems.push_back(item.item + " has SHA-256 " + item.found + ", recorded " + item.expected);
    }
  }
  if (log) {
    if (auto problem = llama_log_problem(*log)) {
      problems.push_back(*problem);
    }
  }
  return problems;
}

} // namespace

VerifyFindings verify_vm(guest::GuestSession& session,
                         const std::string& state_dir,
                         const std::string& vm,
                         const std::optional<VerifiedLog>& log) {
  VerifyFindings found;
  auto record = provenance::read_provenance(state_dir, vm);
  found.profile = recorded_profile(record.ok() ? std::optional(record.value()) : std::nullopt,
                                   enablement::Profile::standard());
  const guest::GuestFacts facts = guest::gather_guest_facts(session).value_or_throw();
  const apply::GuestEnablement observed =
      apply::observe_enablement(session, facts).value_or_throw();
  const apply::EnablementTarget target =
      apply::enablement_target(observed, facts, vm).value_or_throw();
  found.shim = target.shim;
  found.probe = apply::run_probes(session, target.shim, found.profile).value_or_throw();
  found.verdict = apply::judge_probe(
      found.probe.stock, found.probe.unlocked, found.profile, !target.shim.external);
  // Each entry's child rule, and each agent's process: launchd runs it, with the shim in it.
  found.entries =
      apply::check_entries(session, observed, target, found.probe.unlocked).value_or_throw();
  // The installed artifacts (the host record's): each guest file re-hashed.
  if (record.ok()) {
    found.artifact_checks = check_artifacts(session, record.value()).value_or_throw();
  }
  found.problems = problems_of(found, log);
  return found;
}

} // namespace lume_unlock::pipeline
