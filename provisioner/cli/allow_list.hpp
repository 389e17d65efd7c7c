#pragma once

#include "cli/context.hpp"
#include "guest/ssh_session.hpp"

#include <string>

namespace lume_unlock::cli {

/// `allow list VM`: the guest's enablement entries with their agent state and their origin
/// (recipe, allow, or unrecorded when the VM's provenance record does not know the entry), as
/// text or --json. Throws Error like the other commands.
void run_allow_list(const std::string& vm,
                    const guest::ConnectionOptions& connection,
                    Context& context);

} // namespace lume_unlock::cli
