#pragma once

#include "apply/agent_proof.hpp"
#include "apply/probe.hpp"
#include "apply/shim_record.hpp"
#include "guest/session.hpp"
#include "lume/types.hpp"
#include "provenance/provenance.hpp"
#include "util/result.hpp"
#include "verify/llama_log.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// One thing the provenance record promises, compared with the guest now.
struct StatusItem {
  std::string item;     ///< "shim file <path>", "guard file", "agent 'x' plist", ...
  std::string expected; ///< what the record (or the applied list) says
  std::string found;    ///< what the guest holds ("missing" when absent)
  std::string fix = {}; ///< how to bring it back, when the item drifted and a fix is known
  bool ok() const { return expected == found; }
};

struct StatusReport {
  std::vector<StatusItem> items;
  std::uint64_t commands = 0; ///< remote commands it took
  bool drift() const { return !drifted().empty(); }
  std::vector<StatusItem> drifted() const;
};

/// Compares the host record of a VM with its guest (4 commands: facts, one observe of the
/// enablement files and agents, one `shasum` of the shim and artifact files, one realpath of the
/// programs): every shim and artifact file (as check_artifacts), the guard file (as rendered from
/// enablement.json), enablement.json (the entries' names and programs), each program's real path
/// now against the recorded one (a link re-pointed since, say by `brew upgrade`, drifts, with a
/// `fix`), each agent's plist SHA-256 and whether it is loaded, no stray agent of ours, and the
/// guest's provenance.json (timestamps aside).
Result<StatusReport> check_status(guest::GuestSession& session,
                                  const provenance::Provenance& record);

nlohmann::json to_json(const StatusReport& report);

/// Where Lume's VNC server for a VM listens, from its vncUrl ("vnc://:PASSWORD@HOST:PORT") with
/// the password left out: "HOST:PORT". Nothing when vncUrl is null: no listener (a run with
/// `"vnc":"disabled"` on a Lume newer than 0.5.3, or a stopped VM).
std::optional<std::string> vnc_listener(const lume::VmDetails& details);

// verify's checks of one VM, in order: the probe stock and unlocked against the recorded profile,
// each entry's child rule and each running agent's process, the installed artifacts re-hashed,
// and (when given) a llama.cpp log's last run. cli/verify parses the flags and renders this.

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
