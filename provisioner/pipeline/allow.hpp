#pragma once

#include "apply/enablement_apply.hpp"
#include "enablement/enablement_list.hpp"
#include "guest/session.hpp"
#include "util/result.hpp"

#include <map>
#include <string>

namespace lume_unlock::pipeline {

/// What `allow list` shows: the guest's view and where each entry came from.
struct AllowListView {
  apply::GuestEnablementView view;
  /// Entry name → "recipe" or "allow" as the VM's provenance record says (current_vm_record);
  /// an entry the record does not know is absent.
  std::map<std::string, std::string> origins;

  /// The origin of the entry `name`, or "unrecorded" when the record does not know it.
  std::string origin_of(const std::string& name) const {
    const auto found = origins.find(name);
    return found == origins.end() ? "unrecorded" : found->second;
  }
};

/// The usage error for `entry`, which the enablement list `list` lacks: `what` failed because
/// `why`; the hint is "did you mean 'NAME'?" for a close name (then " (FLAG NAME)" with a `flag`),
/// else `otherwise`. allow remove, bench and exec say it with this one function.
Error unknown_entry(const enablement::EnablementList& list,
                    const std::string& entry,
                    const std::string& what,
                    const std::string& why,
                    const std::string& otherwise,
                    const std::string& flag = {});

/// "enable PROGRAM first: 'lume-unlock allow add VM ENTRY --no-agent --program PATH'".
std::string
enable_first(const std::string& program, const std::string& vm, const std::string& entry);

/// `allow list`: the enablement list as applied in the guest of `vm`, with the installed shim,
/// the loaded agents (apply::read_guest_enablement: 2 commands) and the entries' origins (the
/// host record in `state_dir`, else the guest's). Fails (guest) when the shim is not installed.
Result<AllowListView>
allow_list(guest::GuestSession& session, const std::string& state_dir, const std::string& vm);

/// `allow add`: reads the guest's list, puts the (validated) `entry` in it (list_with_entry) and
/// applies the result, or with `dry_run` only prechecks and plans it. Then it records the list
/// (origin "allow" for `entry`) in the VM's provenance record, guest and host (`state_dir`), so
/// `status` stays clean; a re-run that changes nothing in the guest still brings the record up
/// to date. Returns what changed (or would). Errors of the apply name "allow add '<entry>' in
/// VM '<vm>'".
Result<apply::ApplyReport> allow_add(guest::GuestSession& session,
                                     const std::string& state_dir,
                                     const std::string& vm,
                                     const enablement::EnablementEntry& entry,
                                     bool dry_run);

/// `allow remove`: reads the guest's list, drops the entry named `entry` and applies the result
/// (its agent booted out and deleted), or with `dry_run` only plans it, and records the list as
/// allow_add does. Fails (usage, with a "did you mean" hint) when the list has no such entry.
Result<apply::ApplyReport> allow_remove(guest::GuestSession& session,
                                        const std::string& state_dir,
                                        const std::string& vm,
                                        const std::string& entry,
                                        bool dry_run);

} // namespace lume_unlock::pipeline
