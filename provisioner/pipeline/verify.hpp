#pragma once
// verify's checks of one VM, in order: the probe stock and unlocked against the recorded profile,
// each entry's child rule and each running agent's process, the installed artifacts re-hashed,
// and (when given) a llama.cpp log's last run. cli/verify parses the flags and renders this.
#include "apply/agent_proof.hpp"
#include "apply/probe.hpp"
#include "apply/shim_installer.hpp"
#include "enablement/enablement_list.hpp"
#include "guest/session.hpp"
#include "pipeline/status.hpp"
#include "verify/llama_log.hpp"

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

struct VerifyFindings {
  enablement::Profile profile;
  apply::InstalledShim shim;
  apply::ProbeRun probe;
  apply::ProbeVerdict verdict;
  std::vector<apply::EntryCheck> entries;
  std::vector<StatusItem> artifact_checks;
  std::vector<std::string> problems; ///< empty: the VM passes
};

/// A llama.cpp log to judge beside the guest: where it is, and its classification.
struct VerifiedLog {
  std::string path;
  verify::LlamaLogReport report;
};

/// Runs every check over `session` (the VM's guest) and collects the problems. Throws on a guest
/// that cannot be read; a failed check is a problem, not an error.
VerifyFindings verify_vm(guest::GuestSession& session,
                         const std::string& state_dir,
                         const std::string& vm,
                         const std::optional<VerifiedLog>& log);

} // namespace lume_unlock::pipeline
