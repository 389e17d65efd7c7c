#include "pipeline/remove.hpp"

#include "guest/guest_layout.hpp"
#include "guest/guest_records.hpp"
#include "guest/shell_quote.hpp"
#include "lume/client.hpp"
#include "provenance/provenance.hpp"
#include "util/atomic_file.hpp"
#include "util/text.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace lume_unlock::pipeline {

Result<std::string> guest_cleanup_command(const std::string& home, std::uint32_t uid) {
  auto agents = guest::shell_quote(home + "/Library/LaunchAgents");
  auto support = guest::shell_quote(guest::support_dir_of_home(home));
  auto logs = guest::shell_quote(home + "/Library/Logs/LumeUnlock");
  for (const auto* quoted : {&agents, &support, &logs}) {
    if (!quoted->ok()) {
      return quoted->error();
    }
  }
  return "for f in " + agents.value() +
         "/dev.lume-unlock.*.plist; do\n"
         "  [ -e \"$f\" ] || continue\n"
         "  n=${f##*/}; l=${n%.plist}\n"
         "  launchctl bootout gui/" +
         std::to_string(uid) +
         "/\"$l\" >/dev/null 2>&1\n"
         "  rm -f \"$f\" && printf 'removed %s\\n' \"$l\"\n"
         "done\n"
         "if [ -e " +
         support.value() + " ] || [ -e " + logs.value() +
         " ]; then echo present; fi\n"
         "rm -rf " +
         support.value() + " " + logs.value() + "\n";
}

std::optional<lume::VmState> RemovePipeline::find_vm() {
  const std::string& vm = m_options.vm;
  auto lookup = m_services.lume.find(lume::VmRef{vm});
  if (lookup.ok() || !lume::is_sticky_pull_failure(lookup.error())) {
    return std::move(lookup).value_or_throw();
  }
  // An earlier failed pull masks the name in GET /lume/vms/NAME; the list and DELETE are not
  // masked (lume-api.md §3.2, §3.3), so the VM is looked up there and can still be deleted.
  const auto listed = lume::find_listed(m_services.lume, vm).value_or_throw();
  if (!listed) {
    return std::nullopt; // the failed pull left no VM; the next pull under the name clears it
  }
  if (listed->status == lume::VmStatus::running && !m_options.delete_vm) {
    // Reaching the guest needs its address, which only the masked answer gives.
    throw lookup.error().with_hint("VM '" + vm +
                                   "' exists, but Lume hides it behind that failed pull until "
                                   "its server restarts: restart Lume ('lume serve') and run "
                                   "this again, or delete the VM with 'lume-unlock remove " +
                                   vm + " --delete-vm'");
  }
  return lume::VmState(*listed);
}

Plan RemovePipeline::plan() {
  const std::string& vm = m_options.vm;
  const std::optional<lume::VmState> found = find_vm();
  const std::string record_path =
      provenance::provenance_path(m_options.state_dir, vm).value_or_throw();
  const bool has_record = util::path_exists(record_path);
  const bool running = found && lume::status_of(*found) == lume::VmStatus::running;
  if (!found && !has_record) {
    throw Error(ErrorCategory::usage,
                "remove '" + vm + "'",
                "Lume has no such VM and there is no lume-unlock record of it",
                "list the VMs with 'lume ls'");
  }
  if (found && !running && !m_options.delete_vm) {
    throw Error(ErrorCategory::lume_api,
                "remove '" + vm + "'",
                "the VM is " + lume::describe(*found) + ": its guest cannot be cleaned",
                "start it with 'lume run " + vm +
                    " --no-display', or remove it entirely with "
                    "'lume-unlock remove " +
                    vm + " --delete-vm'");
  }
  Plan plan("remove");
  plan.add(Step::observed_as("guest",
                             "boot out and delete our agents, delete the guard file, "
                             "enablement.json, shim, probe, guest provenance and logs",
                             m_options.delete_vm ? std::optional<bool>(true) : std::nullopt,
                             m_options.delete_vm ? "skipped: the VM is deleted" : "",
                             [this] { return step_guest(); }));
  plan.add(Step::observed_as("host-record",
                             "keep the host record as removed-<time>.json",
                             !has_record,
                             has_record ? record_path : "no host record",
                             [this] { return step_host_record(); }));
  plan.add(
      Step::observed_as("delete-vm",
                        "delete the VM through Lume",
                        !m_options.delete_vm || !found,
                        !m_options.delete_vm ? "kept (no --delete-vm)" : (found ? "" : "absent"),
                        [this]() -> StepResult {
                          m_services.lume.remove(lume::VmRef{m_options.vm}).value_or_throw();
                          return {true, "deleted VM '" + m_options.vm.str() + "'"};
                        }));
  return plan;
}

StepResult RemovePipeline::step_guest() {
  m_session = m_services.connect();
  const guest::GuestFacts facts = guest::gather_guest_facts(*m_session).value_or_throw();
  const std::string command =
      guest_cleanup_command(facts.home, static_cast<std::uint32_t>(facts.uid)).value_or_throw();
  const guest::CommandResult result = m_session->run(command).value_or_throw();
  if (result.exit_status != 0) {
    throw Error(ErrorCategory::guest,
                "cleaning the guest of VM '" + m_options.vm.str() + "'",
                "the cleanup command exited with " + std::to_string(result.exit_status) +
                    (result.stderr_text.empty() ? "" : ": " + result.stderr_text),
                "check the guest's permissions on ~/Library");
  }
  std::istringstream lines(result.stdout_text);
  std::string line;
  bool files_present = false;
  while (std::getline(lines, line)) {
    if (util::starts_with(line, "removed ")) {
      m_outcome.removed_agents.push_back(line.substr(8));
    }
    files_present = files_present || line == "present";
  }
  m_outcome.ssh_commands = m_session->command_count();
  if (!files_present && m_outcome.removed_agents.empty()) {
    return {false, "the guest holds nothing of lume-unlock"};
  }
  return {true,
          "removed " + std::to_string(m_outcome.removed_agents.size()) + " agent(s) and " +
              guest::support_dir_of_home(facts.home)};
}

StepResult RemovePipeline::step_host_record() {
  const std::string record_path =
      provenance::provenance_path(m_options.state_dir, m_options.vm).value_or_throw();
  std::string stamp = provenance::rfc3339_now();
  for (char& c : stamp) {
    c = c == ':' ? '-' : c;
  }
  const std::string target =
      record_path.substr(0, record_path.find_last_of('/')) + "/removed-" + stamp + ".json";
  if (std::rename(record_path.c_str(), target.c_str()) != 0) {
    throw Error(ErrorCategory::failure,
                "keeping the record of VM '" + m_options.vm.str() + "'",
                "rename of '" + record_path + "' failed: " + std::strerror(errno),
                "check the state directory's permissions");
  }
  m_outcome.removal_record = target;
  return {true, "moved to " + target};
}

} // namespace lume_unlock::pipeline
