#include "pipeline/exec_entry.hpp"

#include "enablement/launch_agent.hpp"
#include "guest/shell_quote.hpp"

namespace lume_unlock::pipeline {

Result<std::string> exec_command_line(const enablement::EnablementEntry& entry,
                                      const EnablementTarget& target,
                                      const std::vector<std::string>& extra_args) {
  auto environment = enablement::agent_environment(entry, target.layout, target.settings);
  if (!environment.ok()) {
    return environment.error();
  }
  std::string line = "cd / && ";
  // Assignments before the command: the shell passes them to the program's environment only.
  for (const auto& [key, value] : environment.value()) {
    auto quoted = guest::shell_quote(value);
    if (!quoted.ok()) {
      return quoted.error();
    }
    line += key + "=" + quoted.value() + " ";
  }
  std::vector<std::string> argv = {entry.program};
  argv.insert(argv.end(), entry.args.begin(), entry.args.end());
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  auto command = guest::shell_join(argv);
  if (!command.ok()) {
    return command.error();
  }
  return line + command.value();
}

} // namespace lume_unlock::pipeline
