#include "pipeline/vm_state.hpp"

#include "util/atomic_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lume_unlock::pipeline {

namespace {

Error unusable(const std::string& dir, const std::string& why) {
  return Error(ErrorCategory::usage,
               "state directory '" + dir + "'",
               why,
               "pass a directory you own with --state-dir or set LUME_UNLOCK_STATE_DIR to one");
}

Error not_writable(const std::string& dir, const std::string& why) {
  return Error(ErrorCategory::failure,
               "state directory '" + dir + "'",
               "not writable: " + why,
               "make it writable ('chmod u+w " + dir +
                   "') or choose another with --state-dir; nothing was changed");
}

} // namespace

Status check_state_dir_readable(const std::string& dir) {
  if (dir.empty()) {
    return unusable(dir, "the path is empty");
  }
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) {
    if (errno == ENOENT) {
      return ok_status(); // nothing recorded yet; the first create makes it
    }
    return unusable(dir, std::strerror(errno));
  }
  if (!S_ISDIR(info.st_mode)) {
    return unusable(dir, "it is not a directory");
  }
  if (::access(dir.c_str(), R_OK | X_OK) != 0) {
    return unusable(dir, "it is not readable (" + std::string(std::strerror(errno)) + ")");
  }
  return ok_status();
}

std::string vm_lock_path(const std::string& state_dir, const lume::VmName& vm) {
  return state_dir + "/vms/" + vm.str() + "/lock";
}

util::FileLock lock_vm(const std::string& state_dir,
                       const lume::VmName& vm,
                       const std::string& command,
                       std::chrono::milliseconds timeout) {
  const std::string dir = state_dir + "/vms/" + vm.str();
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

std::string guest_record_path(const std::string& home) {
  return guest::support_dir_of_home(home) + "/provenance.json";
}

Result<provenance::Provenance> read_guest_record(guest::GuestSession& session,
                                                 const std::string& home) {
  LUME_UNLOCK_TRY_ASSIGN(
      auto text, session.read_file(guest_record_path(home), provenance::k_max_provenance_bytes));
  return provenance::parse_provenance(text);
}

std::optional<provenance::Provenance> current_vm_record(guest::GuestSession& session,
                                                        const std::string& home,
                                                        const std::string& state_dir,
                                                        const std::string& vm) {
  if (auto host = provenance::read_provenance(state_dir, vm); host.ok()) {
    return host.value();
  }
  auto guest = read_guest_record(session, home);
  return guest.ok() ? std::optional(guest.value()) : std::nullopt;
}

Status write_vm_record(guest::GuestSession& session,
                       const std::string& home,
                       const std::string& state_dir,
                       const provenance::Provenance& record) {
  const std::string bytes = provenance::to_json(record).dump(2) + "\n";
  LUME_UNLOCK_TRY(session.upload(bytes, guest_record_path(home), 0644));
  return provenance::write_provenance(state_dir, record);
}

provenance::ImageInfo image_info(const transfer::PulledImage& pulled) {
  provenance::ImageInfo image{pulled.reference, pulled.digest.str(), std::nullopt, std::nullopt};
  if (!pulled.lume_manifest_digest.empty()) {
    image.lume_manifest_digest = pulled.lume_manifest_digest;
  }
  if (pulled.signature) {
    image.signed_by = pulled.signature->key_fingerprint;
  }
  return image;
}

provenance::HardwareInfo hardware_of(const lume::VmDetails& details) {
  provenance::HardwareInfo hw;
  if (details.cpu_count > 0) {
    hw.cpu = static_cast<std::int64_t>(details.cpu_count);
  }
  if (details.memory_size > 0) {
    hw.memory_bytes = details.memory_size;
  }
  if (details.disk_size.total > 0) {
    hw.disk_bytes = details.disk_size.total;
  }
  return hw;
}

enablement::Profile recorded_profile(const std::optional<provenance::Provenance>& record,
                                     enablement::Profile fallback) {
  if (record && record->shim && record->shim->profile) {
    const provenance::ShimProfile& p = *record->shim->profile;
    if (p.apple_family_max) {
      fallback.apple_family_max = static_cast<std::uint64_t>(*p.apple_family_max);
    }
    if (p.max_threadgroup_memory) {
      fallback.max_threadgroup_memory = static_cast<std::uint64_t>(*p.max_threadgroup_memory);
    }
  }
  return fallback;
}

std::map<std::string, std::string>
enablement_origins(const std::optional<provenance::Provenance>& record) {
  std::map<std::string, std::string> origins;
  if (record && record->enablement) {
    for (const auto& entry : *record->enablement) {
      origins[entry.name] = provenance::origin_of(entry);
    }
  }
  return origins;
}

Result<std::vector<provenance::EnablementRecord>>
enablement_records(const enablement::EnablementList& list,
                   const guest::GuestLayout& layout,
                   const enablement::AgentSettings& settings,
                   const std::map<std::string, std::string>& origins) {
  LUME_UNLOCK_TRY_ASSIGN(auto agents, enablement::render_agents(list, layout, settings));
  std::vector<provenance::EnablementRecord> records;
  for (const auto& entry : list.entries) {
    provenance::EnablementRecord record;
    record.name = entry.name;
    record.program = entry.program;
    record.resolved_program = entry.resolved_program;
    record.agent = entry.agent;
    for (const auto& agent : agents) {
      if (agent.name == entry.name) {
        record.plist_sha256 = agent.sha256;
      }
    }
    const auto origin = origins.find(entry.name);
    record.origin = origin == origins.end() ? provenance::k_origin_recipe : origin->second;
    records.push_back(record);
  }
  return records;
}

} // namespace lume_unlock::pipeline
