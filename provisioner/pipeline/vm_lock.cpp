#include "pipeline/vm_lock.hpp"

#include "provenance/provenance.hpp"
#include "util/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lume_unlock::pipeline {

namespace {

std::string vm_state_dir(const std::string& state_dir, const lume::VmName& vm) {
  return state_dir + "/vms/" + vm.str();
}

Error not_writable(const std::string& dir, const std::string& why) {
  return Error(ErrorCategory::failure,
               "state directory '" + dir + "'",
               "not writable: " + why,
               "make it writable ('chmod u+w " + dir +
                   "') or choose another with --state-dir; nothing was changed");
}

} // namespace

std::string vm_lock_path(const std::string& state_dir, const lume::VmName& vm) {
  return vm_state_dir(state_dir, vm) + "/lock";
}

util::FileLock lock_vm(const std::string& state_dir,
                       const lume::VmName& vm,
                       const std::string& command,
                       std::chrono::milliseconds timeout) {
  const std::string dir = vm_state_dir(state_dir, vm);
  if (auto made = util::make_directories(dir, 0700); !made.ok()) {
    throw not_writable(dir, made.error().why());
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw not_writable(dir, std::strerror(errno));
  }
  const std::string holder = "pid " + std::to_string(::getpid()) + " ('lume-unlock " + command +
                             " " + vm.str() + "', started " + provenance::rfc3339_now() + ")";
  auto lock = util::FileLock::acquire(vm_lock_path(state_dir, vm), holder, timeout);
  if (!lock.ok()) {
    throw lock.error().with_context("VM '" + vm.str() + "' is busy: " + command);
  }
  return std::move(lock.value());
}

} // namespace lume_unlock::pipeline
