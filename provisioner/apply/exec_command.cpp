#include "apply/exec_command.hpp"

#include "enablement/launch_agent.hpp"
#include "guest/shell_quote.hpp"

#include <map>
#include <optional>

namespace lume_unlock::apply {

namespace {

/// "cd / && [unset VAR && ]K='v' … 'program' 'arg' …". Assignments before the command reach the
/// program's environment only; and unlike env(1), the shell never takes a program path that
/// holds '=' for one more assignment.
Result<std::string> command_line(const std::optional<std::string>& unset,
                                 const std::map<std::string, std::string>& environment,
                                 const enablement::EnablementEntry& entry,
                                 const std::vector<std::string>& extra_args) {
  std::string line = "cd / && ";
  if (unset) {
    LUME_UNLOCK_TRY(guest::require_shell_name(*unset));
    line += "unset " + *unset + " && ";
  }
  for (const auto& [key, value] : environment) {
    LUME_UNLOCK_TRY(guest::require_shell_name(key));
    LUME_UNLOCK_TRY_ASSIGN(auto quoted, guest::shell_quote(value));
    line += key + "=" + quoted + " ";
  }
  std::vector<std::string> argv = {entry.program};
  argv.insert(argv.end(), entry.args.begin(), entry.args.end());
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  LUME_UNLOCK_TRY_ASSIGN(auto command, guest::shell_join(argv));
  return line + command;
}

} // namespace

Result<std::string> exec_command_line(const enablement::EnablementEntry& entry,
                                      const EnablementTarget& target,
                                      const std::vector<std::string>& extra_args) {
  LUME_UNLOCK_TRY_ASSIGN(const auto environment,
                         enablement::agent_environment(entry, target.layout, target.settings));
  return command_line(std::nullopt, environment, entry, extra_args);
}

Result<std::string> stock_command_line(const enablement::EnablementEntry& entry,
                                       const EnablementTarget& target,
                                       const std::vector<std::string>& extra_args) {
  // The same validation as the agent's environment, so both sides refuse the same entries.
  LUME_UNLOCK_TRY(enablement::agent_environment(entry, target.layout, target.settings));
  return command_line(target.settings.inject_variable, entry.env, entry, extra_args);
}

} // namespace lume_unlock::apply
