#pragma once

#include "apply/enablement_apply.hpp"
#include "enablement/enablement_list.hpp"
#include "util/result.hpp"

#include <string>
#include <vector>

namespace lume_unlock::apply {

/// The remote command line that runs `entry` once as its agent would: from `/` (launchd's
/// working directory), with exactly the agent's environment on top of the session's
/// (agent_environment: injection variable, profile, guard file, entry env), the program, its
/// args, then `extra_args`. Every value is quoted with shell_quote; keys are validated names.
Result<std::string> exec_command_line(const enablement::EnablementEntry& entry,
                                      const EnablementTarget& target,
                                      const std::vector<std::string>& extra_args);

/// The same command line without the shim: from `/`, the injection variable unset (`env -u`),
/// only the entry's own env on top of the session's, then the program, its args and
/// `extra_args`. What `bench` runs as the stock side of its comparison. Fails like
/// exec_command_line for an entry whose env clashes with lume-unlock's.
Result<std::string> stock_command_line(const enablement::EnablementEntry& entry,
                                       const EnablementTarget& target,
                                       const std::vector<std::string>& extra_args);

} // namespace lume_unlock::apply
