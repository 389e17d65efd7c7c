#pragma once
// What lume-unlock keeps of a VM: the state directory (readable at all), the VM's one-writer
// lock beside its host record, and the provenance record as the commands that edit it read and
// write it (host and guest).

#include "enablement/enablement_list.hpp"
#include "enablement/enablement_plan.hpp"
#include "guest/guest_layout.hpp"
#include "guest/session.hpp"
#include "lume/types.hpp"
#include "provenance/provenance.hpp"
#include "transfer/image_pull.hpp"
#include "util/atomic_file.hpp"
#include "util/result.hpp"

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// Ok when `dir` can hold or already holds lume-unlock's state: it does not exist yet, or it is
/// a directory this user may read and enter. Else a usage error naming the directory and why,
/// so a command does not report a missing record for a state directory it could never have
/// read (issue 27).
Status check_state_dir_readable(const std::string& dir);

/// "<state_dir>/vms/<vm>/lock": the one-writer lock of a VM, beside its provenance record.
std::string vm_lock_path(const std::string& state_dir, const lume::VmName& vm);

/// Takes the one-writer lock of `vm` for `command` (e.g. "allow add"): every command that
/// changes a VM holds it from before it asks Lume or the guest anything until it exits, so two
/// runs against one VM never interleave. Creates <state_dir>/vms/<vm>/ (0700) first and checks
/// that it is writable, which is also the preflight check that records can be written at the
/// end. The holder line names this process: pid, command and start time. Throws Error (category
/// failure): the state directory is not writable (with the chmod to run), or another run still
/// holds the lock after `timeout` (naming it).
util::FileLock lock_vm(const std::string& state_dir,
                       const lume::VmName& vm,
                       const std::string& command,
                       std::chrono::milliseconds timeout);

/// <support>/provenance.json under the guest's `home`.
std::string guest_record_path(const std::string& home);

/// The guest's record (guest_record_path); fails when it is absent, too large or not a record.
Result<provenance::Provenance> read_guest_record(guest::GuestSession& session,
                                                 const std::string& home);

/// The record of `vm` as the commands that edit it see it: the host's, else the guest's, else
/// nothing. An unreadable record counts as absent.
std::optional<provenance::Provenance> current_vm_record(guest::GuestSession& session,
                                                        const std::string& home,
                                                        const std::string& state_dir,
                                                        const std::string& vm);

/// Writes `record` into the guest, then on the host: the host record is never ahead of the
/// guest's.
Status write_vm_record(guest::GuestSession& session,
                       const std::string& home,
                       const std::string& state_dir,
                       const provenance::Provenance& record);

/// The record's image section for a pulled image (create and pull).
provenance::ImageInfo image_info(const transfer::PulledImage& pulled);

/// The hardware Lume reports for a VM; a 0 (a key its config.json lacks) is absent, not invented.
provenance::HardwareInfo hardware_of(const lume::VmDetails& details);

/// `fallback` with the shim profile `record` has (each value it records).
enablement::Profile recorded_profile(const std::optional<provenance::Provenance>& record,
                                     enablement::Profile fallback);

/// Entry name → origin (provenance::origin_of) of the enablement entries in `record`.
std::map<std::string, std::string>
enablement_origins(const std::optional<provenance::Provenance>& record);

/// The enablement section for `list` as applied with `layout` and `settings`, in list order,
/// with the SHA-256 of each rendered plist and the origin `origins` gives the name
/// (k_origin_recipe when it gives none). Fails like enablement::render_agents.
Result<std::vector<provenance::EnablementRecord>>
enablement_records(const enablement::EnablementList& list,
                   const guest::GuestLayout& layout,
                   const enablement::AgentSettings& settings,
                   const std::map<std::string, std::string>& origins);

} // namespace lume_unlock::pipeline
