#include "cli/ssh.hpp"

#include "cli/vm_guest.hpp"
#include "guest/connection_options.hpp"
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
  guest::CommandResult result = session->run(command_line).value_or_throw();
  context.debug("remote commands run: " + std::to_string(session->command_count()));
  if (result.exit_status < 0) {
    throw Error(ErrorCategory::guest,
                "command in VM '" + options.vm + "'",
                "it ended without an exit status (killed by a signal?)",
                "run it again; check the guest's logs if it keeps happening");
  }
  if (context.json()) {
    nlohmann::json document = {{"vm", options.vm},
                               {"exit_status", result.exit_status},
                               {"stdout", result.stdout_text},
                               {"stderr", result.stderr_text}};
    // Remote output need not be UTF-8: invalid bytes become U+FFFD rather than failing.
    context.out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    context.out << result.stdout_text;
    context.err << result.stderr_text;
  }
  return result.exit_status;
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
  guest::add_connection_options(*command, options->connection);
  command->callback([options, &context, &exit_code] { exit_code = run_ssh(*options, context); });
}

} // namespace lume_unlock::cli
