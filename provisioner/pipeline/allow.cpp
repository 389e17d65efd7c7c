#include "pipeline/allow.hpp"

#include "util/edit_distance.hpp"
#include "util/text_check.hpp"

namespace lume_unlock::pipeline {

namespace {

/// "entry 'x' is not on the enablement list of VM 'vm'" with a "did you mean" hint.
Error unknown_entry(const std::string& what,
                    const std::string& entry,
                    const std::string& vm,
                    const enablement::EnablementList& list) {
  const auto suggestion = util::closest_match(entry, list.names());
  return Error(ErrorCategory::usage,
               what,
               "entry " + util::quote_for_message(entry) + " is not on the enablement list of VM " +
                   util::quote_for_message(vm),
               suggestion ? "did you mean " + util::quote_for_message(*suggestion) + "?"
                          : "see the list with 'lume-unlock allow list " + vm + "'");
}

/// Applies `desired` in the guest, or with `dry_run` prechecks and plans it only.
Result<apply::ApplyReport> apply_desired(guest::GuestSession& session,
                                         const std::string& what,
                                         const enablement::EnablementList& desired,
                                         const apply::GuestEnablementView& view,
                                         bool dry_run) {
  if (!dry_run) {
    auto applied = apply::apply_enablement(session, desired, view.target, view.observed);
    if (!applied.ok()) {
      return applied.error().with_context(what);
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
  report.warnings = prepared.value().warnings;
  return report;
}

std::string describe(const std::string& verb, const std::string& entry, const std::string& vm) {
  return "allow " + verb + " " + util::quote_for_message(entry) + " in VM " +
         util::quote_for_message(vm);
}

} // namespace

Result<apply::GuestEnablementView> allow_list(guest::GuestSession& session, const std::string& vm) {
  return apply::read_guest_enablement(session, vm);
}

enablement::EnablementList list_with_entry(const enablement::EnablementList& list,
                                           const enablement::EnablementEntry& entry) {
  enablement::EnablementList desired = list;
  bool replaced = false;
  for (enablement::EnablementEntry& existing : desired.entries) {
    if (existing.name == entry.name) {
      existing = entry;
      replaced = true;
    }
  }
  if (!replaced) {
    desired.entries.push_back(entry);
  }
  return desired;
}

Result<apply::ApplyReport> allow_add(guest::GuestSession& session,
                                     const std::string& vm,
                                     const enablement::EnablementEntry& entry,
                                     bool dry_run) {
  LUME_UNLOCK_TRY_ASSIGN(auto view, apply::read_guest_enablement(session, vm));
  return apply_desired(
      session, describe("add", entry.name, vm), list_with_entry(view.list, entry), view, dry_run);
}

Result<apply::ApplyReport> allow_remove(guest::GuestSession& session,
                                        const std::string& vm,
                                        const std::string& entry,
                                        bool dry_run) {
  LUME_UNLOCK_TRY_ASSIGN(auto view, apply::read_guest_enablement(session, vm));
  const enablement::EnablementList& list = view.list;
  if (list.find(entry) == nullptr) {
    return unknown_entry("allow remove", entry, vm, list);
  }
  enablement::EnablementList desired;
  for (const enablement::EnablementEntry& kept : list.entries) {
    if (kept.name != entry) {
      desired.entries.push_back(kept);
    }
  }
  return apply_desired(session, describe("remove", entry, vm), desired, view, dry_run);
}

} // namespace lume_unlock::pipeline
