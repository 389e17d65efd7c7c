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

} // namespace lume_unlock::apply
