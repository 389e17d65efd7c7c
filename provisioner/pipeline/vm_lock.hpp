#pragma once

#include "lume/types.hpp"
#include "util/file_lock.hpp"

#include <chrono>
#include <string>

namespace lume_unlock::pipeline {

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

} // namespace lume_unlock::pipeline
