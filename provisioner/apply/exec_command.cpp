#include "apply/exec_command.hpp"

#include "enablement/launch_agent.hpp"
#include "guest/shell_quote.hpp"

namespace lume_unlock::apply {

Result<std::string> exec_command_line(const enablement::EnablementEntry& entry,
                                      const EnablementTarget& target,
                                      const std::vector<std::string>& extra_args) {
  LUME_UNLOCK_TRY_ASSIGN(const auto environment,
                         enablement::agent_environment(entry, target.layout, target.settings));
  std::string line = "cd / && ";
  // Assignments before the command: the shell passes them to the program's environment only.
  for (const auto& [key, value] : environment) {
    LUME_UNLOCK_TRY_ASSIGN(auto quoted, guest::shell_quote(value));
    line += key + "=" + quoted + " ";
  }
  std::vector<std::string> argv = {entry.program};
  argv.insert(argv.end(), entry.args.begin(), entry.args.end());
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  LUME_UNLOCK_TRY_ASSIGN(auto command, guest::shell_join(argv));
  return line + command;
}

Result<std::string> stock_command_line(const enablement::EnablementEntry& entry,
                                       const EnablementTarget& target,
                                       const std::vector<std::string>& extra_args) {
  // The same validation as the agent's environment, so both sides refuse the same entries.
  LUME_UNLOCK_TRY(enablement::agent_environment(entry, target.layout, target.settings));
  std::vector<std::string> argv = {"env", "-u", target.settings.inject_variable};
  for (const auto& [key, value] : entry.env) {
    argv.push_back(key + "=" + value);
  }
  argv.push_back(entry.program);
  argv.insert(argv.end(), entry.args.begin(), entry.args.end());
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  LUME_UNLOCK_TRY_ASSIGN(auto command, guest::shell_join(argv));
  return "cd / && " + command;
}

} // namespace lume_unlock::apply
