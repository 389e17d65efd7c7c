#include "pipeline/status.hpp"

#include "apply/enablement_apply.hpp"
#include "apply/programs.hpp"
#include "enablement/enablement_list.hpp"
#include "enablement/enablement_plan.hpp"
#include "guest/guest_layout.hpp"
#include "guest/guest_records.hpp"
#include "pipeline/vm_state.hpp"
#include "provenance/provenance.hpp"
#include "util/sha256.hpp"

#include <map>
#include <set>

namespace lume_unlock::pipeline {

namespace {

const std::string k_missing = "missing";
using Hashes = std::map<std::string, std::string>;

std::string seen(const Hashes& found, const std::string& path) {
  const auto it = found.find(path);
  return it == found.end() ? k_missing : it->second;
}

/// "'lume-unlock create VM --recipe FILE'", the recorded recipe when there is one.
std::string create_again(const provenance::Provenance& record) {
  return "'lume-unlock create " + record.vm +
         (record.recipe && record.recipe->path ? " --recipe " + *record.recipe->path
                                               : std::string()) +
         "'";
}

const char* describe(apply::ProgramPath::State state) {
  switch (state) {
  case apply::ProgramPath::State::missing:
    return "missing";
  case apply::ProgramPath::State::dangling:
    return "a dangling link";
  case apply::ProgramPath::State::unresolvable:
    return "unresolvable";
  case apply::ProgramPath::State::resolved:
    break;
  }
  return "resolved";
}

/// One item per recorded program (one command for all): the path the guard lists (the recorded
/// resolved_program; the program itself in records from before resolution) against its
/// realpath in the guest now.
Status check_program_paths(guest::GuestSession& session,
                           const std::string& vm,
                           const std::vector<provenance::EnablementRecord>& entries,
                           StatusReport& report) {
  std::vector<const provenance::EnablementRecord*> recorded;
  std::vector<std::string> programs;
  for (const auto& entry : entries) {
    if (entry.program) {
      recorded.push_back(&entry);
      programs.push_back(*entry.program);
    }
  }
  LUME_UNLOCK_TRY_ASSIGN(auto paths, apply::resolve_program_paths(session, programs));
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    const auto& entry = *recorded[i];
    StatusItem item{"program of '" + entry.name + "' (" + *entry.program + ") resolves to",
                    entry.resolved_program.value_or(*entry.program),
                    paths[i].state == apply::ProgramPath::State::resolved
                        ? paths[i].real_path
                        : describe(paths[i].state)};
    if (!item.ok()) {
      item.fix = "the guard file lists " + item.expected +
                 ", so the shim stays off for the program; apply the list again so it is "
                 "resolved anew: run 'lume-unlock allow add " +
                 vm + " " + entry.name + " --program " + *entry.program +
                 " …' again with the entry's options (or 'lume-unlock create " + vm +
                 " --recipe FILE' for a recipe's entry)";
    }
    report.items.push_back(std::move(item));
  }
  return ok_status();
}

std::vector<provenance::ArtifactFile>
recorded_artifact_files(const provenance::Provenance& record) {
  std::vector<provenance::ArtifactFile> files;
  if (record.artifacts) {
    for (const auto& artifact : *record.artifacts) {
      files.insert(files.end(), artifact.files.begin(), artifact.files.end());
    }
  }
  return files;
}

/// The guest paths to hash for the record's artifacts: every recorded file, and for a shared
/// item also the blob its link leads to inside the share (its bytes are checked there).
std::vector<std::string> artifact_paths(const provenance::Provenance& record) {
  std::vector<std::string> paths;
  for (const auto& file : recorded_artifact_files(record)) {
    paths.push_back(file.path);
    if (file.link && !file.sha256.empty()) {
      paths.push_back(*file.link);
    }
  }
  return paths;
}

/// A shared item's file (`file.link` its blob inside the share, `file.sha256` the verified
/// bytes): the link itself, and the bytes the guest reads through it, the host's cached blob.
/// A missing blob means the VM runs without the share, other bytes that the blob changed.
void add_shared_items(const provenance::Provenance& record,
                      const provenance::ArtifactFile& file,
                      const Hashes& found,
                      std::vector<StatusItem>& items) {
  const std::string& blob = *file.link;
  StatusItem link{"shared link " + file.path, guest::link_state(blob), seen(found, file.path)};
  if (!link.ok()) {
    link.fix = "run " + create_again(record) + " again: it links the file to the shared cache";
  }
  items.push_back(std::move(link));
  StatusItem bytes{"shared file " + file.path + " (the host's cached blob, seen at " + blob + ")",
                   file.sha256,
                   seen(found, blob)};
  if (bytes.found == k_missing) {
    bytes.fix = "the VM runs without the host's artifact cache shared: stop it ('lume stop " +
                record.vm + "') and run " + create_again(record) +
                ", which starts it with the share";
  } else if (!bytes.ok()) {
    bytes.fix = "the cached blob changed on the host since it was verified: run " +
                create_again(record) + " again, which fetches and verifies it anew";
  }
  items.push_back(std::move(bytes));
}

std::vector<StatusItem> artifact_items(const provenance::Provenance& record, const Hashes& found) {
  std::vector<StatusItem> items;
  for (const auto& file : recorded_artifact_files(record)) {
    if (file.link && !file.sha256.empty()) {
      add_shared_items(record, file, found, items);
      continue;
    }
    StatusItem item{(file.link ? "artifact link " : "artifact file ") + file.path,
                    file.link ? guest::link_state(*file.link) : file.sha256,
                    seen(found, file.path)};
    if (!item.ok()) {
      item.fix = "run " + create_again(record) + " again: it puts the recorded bytes back";
    }
    items.push_back(std::move(item));
  }
  return items;
}

/// The recorded artifact files re-hashed in the guest (ONE command; none without artifacts).
Result<std::vector<StatusItem>> check_artifacts(guest::GuestSession& session,
                                                const provenance::Provenance& record) {
  LUME_UNLOCK_TRY_ASSIGN(auto found, guest::hash_guest_files(session, artifact_paths(record)));
  return artifact_items(record, found);
}

/// Shim files and the files of installed artifacts: one shasum of every recorded path (missing
/// ones print nothing).
Status check_file_hashes(guest::GuestSession& session,
                         const provenance::Provenance& record,
                         StatusReport& report) {
  std::vector<provenance::FileHash> files;
  if (record.shim && record.shim->files) {
    files = *record.shim->files;
  }
  std::vector<std::string> paths;
  for (const auto& file : files) {
    paths.push_back(file.path);
  }
  for (auto& path : artifact_paths(record)) {
    paths.push_back(std::move(path));
  }
  if (paths.empty()) {
    return ok_status();
  }
  LUME_UNLOCK_TRY_ASSIGN(auto found, guest::hash_guest_files(session, paths));
  for (const auto& file : files) {
    report.items.push_back({"shim file " + file.path, file.sha256, seen(found, file.path)});
  }
  for (auto& item : artifact_items(record, found)) {
    report.items.push_back(std::move(item));
  }
  return ok_status();
}

/// enablement.json and the guard file rendered from it.
void check_enablement_files(const enablement::ObservedState& state,
                            const std::vector<provenance::EnablementRecord>& entries,
                            StatusReport& report) {
  std::string expected_entries;
  for (const auto& entry : entries) {
    expected_entries += entry.name + "=" + entry.program.value_or("") + " ";
  }
  std::string found_entries = k_missing;
  std::string expected_guard = "present";
  std::string found_guard = state.guard_file ? "present" : k_missing;
  if (state.enablement_json) {
    auto list = enablement::parse_enablement_json(*state.enablement_json, "enablement.json");
    if (!list.ok()) {
      found_entries = "unreadable (" + list.error().why() + ")";
    } else {
      found_entries.clear();
      for (const auto& entry : list.value().entries) {
        found_entries += entry.name + "=" + entry.program + " ";
      }
      expected_guard = util::sha256_hex(enablement::render_guard_file(list.value()));
      found_guard = state.guard_file ? util::sha256_hex(*state.guard_file) : k_missing;
    }
  }
  report.items.push_back({"enablement.json", expected_entries, found_entries});
  report.items.push_back({"guard file", expected_guard, found_guard});
}

/// Agents: plist bytes and loaded state; no stray plist of ours.
void check_agents(const enablement::ObservedState& state,
                  const std::vector<provenance::EnablementRecord>& entries,
                  StatusReport& report) {
  std::set<std::string> expected_plists;
  for (const auto& entry : entries) {
    if (!entry.agent.value_or(false)) {
      continue;
    }
    const std::string file_name = guest::agent_plist_file_name(entry.name);
    expected_plists.insert(file_name);
    const auto plist = state.agent_plists.find(file_name);
    report.items.push_back(
        {"agent '" + entry.name + "' plist",
         entry.plist_sha256.value_or(""),
         plist == state.agent_plists.end() ? k_missing : util::sha256_hex(plist->second)});
    if (state.loaded_labels) {
      const bool loaded = state.loaded_labels->count(guest::agent_label(entry.name)) != 0;
      report.items.push_back(
          {"agent '" + entry.name + "' loaded", "loaded", loaded ? "loaded" : "not loaded"});
    }
  }
  for (const auto& [file_name, bytes] : state.agent_plists) {
    if (expected_plists.count(file_name) == 0) {
      report.items.push_back({"agent plist " + file_name, "absent", "present"});
    }
  }
}

/// The guest's own record, against the host's.
void check_guest_record(guest::GuestSession& session,
                        const guest::GuestFacts& facts,
                        const provenance::Provenance& record,
                        StatusReport& report) {
  const auto guest = read_guest_record(session, facts.home);
  const std::string why = guest.ok() ? "" : guest.error().why();
  report.items.push_back(
      {"guest provenance.json",
       "same as the host record",
       guest.ok()
           ? (provenance::same_provenance(guest.value(), record) ? "same as the host record"
                                                                 : "different from the host record")
       : why.find("no such file") != std::string::npos ? k_missing
                                                       : "unreadable (" + why + ")"});
}

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

std::vector<StatusItem> StatusReport::drifted() const {
  std::vector<StatusItem> out;
  for (const auto& item : items) {
    if (!item.ok()) {
      out.push_back(item);
    }
  }
  return out;
}

Result<StatusReport> check_status(guest::GuestSession& session,
                                  const provenance::Provenance& record) {
  const std::uint64_t before = session.command_count();
  StatusReport report;
  LUME_UNLOCK_TRY_ASSIGN(auto facts, guest::gather_guest_facts(session));
  LUME_UNLOCK_TRY_ASSIGN(auto observed, apply::observe_enablement(session, facts));
  LUME_UNLOCK_TRY(check_file_hashes(session, record, report));
  const std::vector<provenance::EnablementRecord> entries =
      record.enablement.value_or(std::vector<provenance::EnablementRecord>{});
  check_enablement_files(observed.state, entries, report);
  // Each program's real path now against the one the guard file was written with: a link
  // re-pointed since (a `brew upgrade`, a rebuilt venv) leaves the shim off for the new target.
  LUME_UNLOCK_TRY(check_program_paths(session, record.vm, entries, report));
  check_agents(observed.state, entries, report);
  check_guest_record(session, facts, record, report);
  report.commands = session.command_count() - before;
  return report;
}

nlohmann::json to_json(const StatusReport& report) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& item : report.items) {
    nlohmann::json entry = {
        {"item", item.item}, {"expected", item.expected}, {"found", item.found}, {"ok", item.ok()}};
    if (!item.fix.empty()) {
      entry["fix"] = item.fix;
    }
    items.push_back(std::move(entry));
  }
  return {{"drift", report.drift()}, {"items", items}};
}

std::optional<std::string> vnc_listener(const lume::VmDetails& details) {
  if (!details.vnc_url) {
    return std::nullopt;
  }
  const std::string& url = *details.vnc_url;
  const std::size_t at = url.rfind('@');
  const std::size_t scheme = url.find("://");
  if (at != std::string::npos) {
    return url.substr(at + 1);
  }
  return scheme == std::string::npos ? url : url.substr(scheme + 3);
}

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
