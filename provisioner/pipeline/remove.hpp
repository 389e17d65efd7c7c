#pragma once

#include "apply/guest_access.hpp"
#include "guest/session.hpp"
#include "lume/client.hpp"
#include "lume/types.hpp"
#include "pipeline/plan.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

struct RemoveOptions {
  lume::VmName vm{"vm"}; ///< a placeholder until the caller sets the parsed name
  std::string state_dir;
  bool delete_vm = false;
};

struct RemoveServices {
  lume::LumeApi& lume;
  apply::GuestConnector connect; ///< only called when the guest must be cleaned
};

/// What a remove did.
struct RemoveOutcome {
  std::vector<std::string> removed_agents;   ///< labels booted out and deleted
  std::optional<std::string> removal_record; ///< <state>/vms/<vm>/removed-<time>.json
  std::uint64_t ssh_commands = 0;
};

/// `remove` as a plan: guest (boot out and delete our agents, delete the guard file,
/// enablement.json, shim files, probe, guest provenance and our logs: the guest is stock again)
/// → host-record (provenance.json becomes removed-<time>.json in the VM's state directory) →
/// delete-vm (only with --delete-vm: DELETE through Lume). With --delete-vm the guest cleanup is
/// skipped (the disk goes away); without it the VM must be running.
class RemovePipeline {
public:
  RemovePipeline(RemoveOptions options, RemoveServices services)
      : m_options(std::move(options)), m_services(std::move(services)) {}

  /// Observes Lume and the host record (read-only) and builds the plan.
  Plan plan();
  const RemoveOutcome& outcome() const { return m_outcome; }

private:
  /// The VM as Lume has it, also when a failed pull masks its name (then as listed).
  std::optional<lume::VmState> find_vm();
  StepResult step_guest();
  StepResult step_host_record();

  RemoveOptions m_options;
  RemoveServices m_services;
  std::unique_ptr<guest::GuestSession> m_session;
  RemoveOutcome m_outcome;
};

/// The ONE remote command that leaves the guest stock: for every dev.lume-unlock.*.plist,
/// `launchctl bootout gui/<uid>/<label>` (failure ignored: it may not be loaded) and delete it;
/// then delete <home>/Library/Application Support/LumeUnlock and <home>/Library/Logs/LumeUnlock.
/// Prints one "removed <label>" line per agent.
Result<std::string> guest_cleanup_command(const std::string& home, std::uint32_t uid);

} // namespace lume_unlock::pipeline
