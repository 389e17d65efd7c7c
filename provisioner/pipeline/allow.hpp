#pragma once

#include "apply/enablement_apply.hpp"
#include "enablement/enablement_list.hpp"
#include "guest/session.hpp"
#include "util/result.hpp"

#include <string>

namespace lume_unlock::pipeline {

/// `allow list`: the enablement list as applied in the guest of `vm`, with the installed shim
/// and the loaded agents (apply::read_guest_enablement: 2 commands). Fails (guest) when the shim
/// is not installed.
Result<apply::GuestEnablementView> allow_list(guest::GuestSession& session, const std::string& vm);

/// The list with `entry` in it: it replaces the entry of the same name in place, or is appended.
enablement::EnablementList list_with_entry(const enablement::EnablementList& list,
                                           const enablement::EnablementEntry& entry);

/// `allow add`: reads the guest's list, puts the (validated) `entry` in it (list_with_entry) and
/// applies the result, or with `dry_run` only prechecks and plans it. Returns what changed (or
/// would). Errors of the apply name "allow add '<entry>' in VM '<vm>'".
Result<apply::ApplyReport> allow_add(guest::GuestSession& session,
                                     const std::string& vm,
                                     const enablement::EnablementEntry& entry,
                                     bool dry_run);

/// `allow remove`: reads the guest's list, drops the entry named `entry` and applies the result
/// (its agent booted out and deleted), or with `dry_run` only plans it. Fails (usage, with a
/// "did you mean" hint) when the list has no such entry.
Result<apply::ApplyReport> allow_remove(guest::GuestSession& session,
                                        const std::string& vm,
                                        const std::string& entry,
                                        bool dry_run);

} // namespace lume_unlock::pipeline
