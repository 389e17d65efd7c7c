#include "pipeline/allow.hpp"

#include "pipeline/vm_state.hpp"
#include "provenance/provenance.hpp"
#include "util/text.hpp"
#include "util/text_check.hpp"

#include <algorithm>

namespace lume_unlock::pipeline {

namespace {

/// The VM's record with the enablement section of `desired` (origin "allow" for
/// `edited`, the recorded origin for the others), when that differs from the record.
Result<std::optional<provenance::Provenance>>
record_for(const std::optional<provenance::Provenance>& current,
           const std::string& vm,
           const enablement::EnablementList& desired,
           const std::string& edited,
           const apply::EnablementTarget& target) {
  std::map<std::string, std::string> origins = enablement_origins(current);
  origins[edited] = provenance::k_origin_allow;
  LUME_UNLOCK_TRY_ASSIGN(auto records,
                         enablement_records(desired, target.layout, target.settings, origins));
  provenance::Provenance record = current ? *current : provenance::Provenance{};
  record.vm = vm;
  record.enablement = records;
  if (current && provenance::same_provenance(record, *current)) {
    return std::optional<provenance::Provenance>();
  }
  const std::string now = provenance::rfc3339_now();
  record.created_at = record.created_at.value_or(now);
  record.updated_at = now;
  return std::optional<provenance::Provenance>(record);
}

/// Applies `desired` in the guest and records it (see allow_add), or with `dry_run` prechecks
/// and plans it only.
Result<apply::ApplyReport> apply_desired(guest::GuestSession& session,
                                         const std::string& state_dir,
                                         const std::string& vm,
                                         const std::string& what,
                                         const enablement::EnablementList& desired,
                                         const std::string& edited,
                                         apply::GuestEnablementView& view,
                                         bool dry_run) {
  const auto current = current_vm_record(session, view.facts.home, state_dir, vm);
  // Render agents with the profile the VM was created with, as create did.
  view.target.settings.default_profile =
      recorded_profile(current, view.target.settings.default_profile);
  if (!dry_run) {
    auto applied = apply::apply_enablement(session, desired, view.target, view.observed);
    if (!applied.ok()) {
      return applied.error().with_context(what);
    }
    auto record = record_for(current, vm, applied.value().applied, edited, view.target);
    if (!record.ok()) {
      return record.error().with_context(what);
    }
    if (record.value()) {
      auto written = write_vm_record(session, view.facts.home, state_dir, *record.value());
      if (!written.ok()) {
        return written.error()
            .with_context(what + ": recording the change")
            .with_hint("the guest has the change; run the command again to record it");
      }
    }
    return applied.value();
  }
  auto prepared = apply::prepare_enablement(session, desired, view.target, view.observed);
  if (!prepared.ok()) {
    return prepared.error().with_context(what);
  }
  apply::ApplyReport report;
  report.changed = !prepared.value().plan.empty();
  report.changes = prepared.value().plan.describe();
  report.checks = prepared.value().checks;
  return report;
}

std::string describe(const std::string& verb, const std::string& entry, const std::string& vm) {
  return "allow " + verb + " " + util::quote_for_message(entry) + " in VM " +
         util::quote_for_message(vm);
}

} // namespace

Error unknown_entry(const enablement::EnablementList& list,
                    const std::string& entry,
                    const std::string& what,
                    const std::string& why,
                    const std::string& otherwise,
                    const std::string& flag) {
  const auto close = util::closest_match(entry, list.names());
  if (!close) {
    return Error(ErrorCategory::usage, what, why, otherwise);
  }
  return Error(ErrorCategory::usage,
               what,
               why,
               "did you mean " + util::quote_for_message(*close) + "?" +
                   (flag.empty() ? "" : " (" + flag + " NAME)"));
}

std::string
enable_first(const std::string& program, const std::string& vm, const std::string& entry) {
  return "enable " + program + " first: 'lume-unlock allow add " + vm + " " + entry +
         " --no-agent --program PATH'";
}

Result<AllowListView>
allow_list(guest::GuestSession& session, const std::string& state_dir, const std::string& vm) {
  LUME_UNLOCK_TRY_ASSIGN(auto view, apply::read_guest_enablement(session, vm));
  auto origins = enablement_origins(current_vm_record(session, view.facts.home, state_dir, vm));
  return AllowListView{std::move(view), std::move(origins)};
}

Result<apply::ApplyReport> allow_add(guest::GuestSession& session,
                                     const std::string& state_dir,
                                     const std::string& vm,
                                     const enablement::EnablementEntry& entry,
                                     bool dry_run) {
  LUME_UNLOCK_TRY_ASSIGN(auto view, apply::read_guest_enablement(session, vm));
  // The entry replaces the one of the same name in place, or is appended.
  enablement::EnablementList desired = view.list;
  const auto same = std::find_if(desired.entries.begin(),
                                 desired.entries.end(),
                                 [&](const auto& existing) { return existing.name == entry.name; });
  if (same != desired.entries.end()) {
    *same = entry;
  } else {
    desired.entries.push_back(entry);
  }
  return apply_desired(
      session, state_dir, vm, describe("add", entry.name, vm), desired, entry.name, view, dry_run);
}

Result<apply::ApplyReport> allow_remove(guest::GuestSession& session,
                                        const std::string& state_dir,
                                        const std::string& vm,
                                        const std::string& entry,
                                        bool dry_run) {
  LUME_UNLOCK_TRY_ASSIGN(auto view, apply::read_guest_enablement(session, vm));
  const enablement::EnablementList& list = view.list;
  if (list.find(entry) == nullptr) {
    return unknown_entry(list,
                         entry,
                         "allow remove",
                         "entry " + util::quote_for_message(entry) +
                             " is not on the enablement list of VM " + util::quote_for_message(vm),
                         "see the list with 'lume-unlock allow list " + vm + "'");
  }
  enablement::EnablementList desired;
  for (const enablement::EnablementEntry& kept : list.entries) {
    if (kept.name != entry) {
      desired.entries.push_back(kept);
    }
  }
  return apply_desired(
      session, state_dir, vm, describe("remove", entry, vm), desired, entry, view, dry_run);
}

} // namespace lume_unlock::pipeline
