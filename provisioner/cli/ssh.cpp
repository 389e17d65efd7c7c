#include "cli/ssh.hpp"

#include "cli/connection_flags.hpp"
#include "cli/remote_command.hpp"
#include "cli/vm_guest.hpp"
#include "guest/shell_quote.hpp"

#include <memory>
#include <string>
#include <vector>

namespace lume_unlock::cli {

namespace {

struct SshCommandOptions {
  std::string vm;
  std::vector<std::string> command;
  guest::ConnectionOptions connection;
};

int run_ssh(const SshCommandOptions& options, Context& context) {
  if (options.command.empty()) {
    throw Error(ErrorCategory::usage,
                "ssh '" + options.vm + "'",
                "no command given",
                "interactive shells are out of scope: give a command after '--', e.g. "
                "'lume-unlock ssh " +
                    options.vm + " -- uname -a' (or use 'lume ssh " + options.vm +
                    "' for a shell)");
  }
  const std::string command_line = guest::shell_join(options.command).value_or_throw();

  auto session = connect_vm_guest(context, options.vm, options.connection);
  return run_remote_command(
      context, *session, command_line, "command in VM '" + options.vm + "'", {{"vm", options.vm}});
}

} // namespace

void register_ssh(CLI::App& app, Context& context, int& exit_code) {
  auto options = std::make_shared<SshCommandOptions>();
  auto* command = app.add_subcommand("ssh", "Run a plain command in the guest (no shim injected)");
  command->footer(
      "The words after '--' are quoted one by one for the guest's shell, so they arrive as\n"
      "typed: lume-unlock ssh vm1 -- printf '%s' \"a b'c\" prints a b'c. lume-unlock exits with\n"
      "the command's exit status (5 also means an SSH failure; see the message). Interactive\n"
      "shells are out of scope: a command is required (use 'lume ssh NAME' for a shell).\n"
      "First login uses the password from --ssh-password-env (default\n"
      "$LUME_UNLOCK_GUEST_PASSWORD, else the image default 'lume'), then installs a per-VM key\n"
      "from the state directory; the guest's host key is pinned on first use.");
  command->add_option("name", options->vm, "The Lume VM")->required();
  command->add_option("command", options->command, "The command and its arguments, after '--'");
  add_connection_options(*command, options->connection);
  command->callback([options, &context, &exit_code] { exit_code = run_ssh(*options, context); });
}

} // namespace lume_unlock::cli
