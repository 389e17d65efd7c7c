#pragma once

#include "enablement/enablement_list.hpp"
#include "enablement/launch_agent.hpp"
#include "guest/guest_layout.hpp"
#include "guest/session.hpp"
#include "provenance/provenance.hpp"
#include "util/result.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::pipeline {

/// The provenance record of `vm` as the commands that edit it see it: the host's
/// (<state_dir>/vms/<vm>/provenance.json), else the guest's (<support>/provenance.json under
/// `home`), else nothing. An unreadable record counts as absent.
std::optional<provenance::Provenance> current_vm_record(guest::GuestSession& session,
                                                        const std::string& home,
                                                        const std::string& state_dir,
                                                        const std::string& vm);

/// Writes `record` into the guest (<support>/provenance.json under `home`), then on the host
/// (provenance::write_provenance): the host record is never ahead of the guest's.
Status write_vm_record(guest::GuestSession& session,
                       const std::string& home,
                       const std::string& state_dir,
                       const provenance::Provenance& record);

/// Entry name → origin (provenance::origin_of) of the enablement entries in `record`.
std::map<std::string, std::string>
enablement_origins(const std::optional<provenance::Provenance>& record);

/// The enablement section for `list` as applied with `layout` and `settings`, in list order:
/// name, program, its resolved real path (when `list` has it), agent, the SHA-256 of the
/// rendered plist, and the origin `origins` gives the
/// name (k_origin_recipe when it gives none). Fails like enablement::render_agents.
Result<std::vector<provenance::EnablementRecord>>
enablement_records(const enablement::EnablementList& list,
                   const guest::GuestLayout& layout,
                   const enablement::AgentSettings& settings,
                   const std::map<std::string, std::string>& origins);

} // namespace lume_unlock::pipeline
