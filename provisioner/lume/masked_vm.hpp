#pragma once

#include "lume/api.hpp"
#include "util/result.hpp"

#include <optional>
#include <string>

namespace lume_unlock::lume {

/// True for Lume's sticky "Pull failed for '<name>': …" answer (lume-api.md §3.3): an earlier
/// pull under that name failed, and GET /lume/vms/NAME answers this until Lume's server restarts
/// or a new pull under the name starts, even when a VM of that name exists.
bool is_sticky_pull_failure(const Error& error);

/// The VM named `vm` as GET /lume/vms lists it, or none. The list is read from the VM
/// directories and no failed pull masks it (§3.2), so this is how a VM behind a sticky pull
/// failure is seen. Fails (lume_api) when the list cannot be read.
Result<std::optional<VmDetails>> find_listed(LumeApi& lume, const std::string& vm);

} // namespace lume_unlock::lume
