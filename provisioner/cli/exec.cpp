#include "apply/enablement_apply.hpp"
#include "apply/llama_runs.hpp"
#include "cli/commands.hpp"
#include "guest/shell_quote.hpp"
#include "pipeline/allow.hpp"
#include "util/text_check.hpp"

#include <memory>
#include <string>
#include <vector>

namespace lume_unlock::cli {

namespace {

struct ExecOptions {
  std::string vm;
  std::string entry;             ///< exec only
  std::vector<std::string> args; ///< the words after '--'
  guest::ConnectionOptions connection;
};

/// Runs `command_line` in the guest once and passes on what it printed: with --json one document
/// (`fields` plus exit_status, stdout and stderr), otherwise its stdout and stderr as they came.
/// Returns the command's exit status, which the command makes its own.
int run_remote_command(Context& context,
                       guest::GuestSession& session,
                       const std::string& command_line,
                       const std::string& subject,
                       nlohmann::json fields) {
  guest::CommandResult result = session.run(command_line).value_or_throw();
  context.debug_counts(session.command_count());
  if (result.exit_status < 0) {
    throw Error(ErrorCategory::guest,
                subject,
                "it ended without an exit status (killed by a signal?)",
                "run it again; check the guest's logs if it keeps happening");
  }
  if (context.json()) {
    fields["exit_status"] = result.exit_status;
    fields["stdout"] = result.stdout_text;
    fields["stderr"] = result.stderr_text;
    context.print_json(fields); // remote output need not be UTF-8: invalid bytes become U+FFFD
  } else {
    context.out << result.stdout_text;
    context.err << result.stderr_text;
  }
  return result.exit_status;
}

int run_exec(const ExecOptions& options, Context& context) {
  auto session = context.open_guest(options.vm, options.connection);
  auto view = apply::read_guest_enablement(*session, options.vm).value_or_throw();
  const enablement::EnablementEntry* entry = view.list.find(options.entry);
  if (entry == nullptr) {
    throw pipeline::unknown_entry(view.list,
                                  options.entry,
                                  "exec " + util::quote_for_message(options.entry),
                                  "it is not on the enablement list of VM " +
                                      util::quote_for_message(options.vm) + " (" +
                                      view.target.layout.enablement_json_path() + ")",
                                  pipeline::enable_first("it", options.vm, options.entry));
  }
  const std::string command =
      apply::exec_command_line(*entry, view.target, options.args).value_or_throw();
  return run_remote_command(context,
                            *session,
                            command,
                            "exec " + util::quote_for_message(options.entry),
                            {{"vm", options.vm}, {"entry", options.entry}});
}

int run_ssh(const ExecOptions& options, Context& context) {
  if (options.args.empty()) {
    throw Error(ErrorCategory::usage,
                "ssh '" + options.vm + "'",
                "no command given",
                "interactive shells are out of scope: give a command after '--', e.g. "
                "'lume-unlock ssh " +
                    options.vm + " -- uname -a' (or use 'lume ssh " + options.vm +
                    "' for a shell)");
  }
  const std::string command_line = guest::shell_join(options.args).value_or_throw();

  auto session = context.open_guest(options.vm, options.connection);
  return run_remote_command(
      context, *session, command_line, "command in VM '" + options.vm + "'", {{"vm", options.vm}});
}

} // namespace

void register_exec(CLI::App& app, Context& context) {
  auto options = std::make_shared<ExecOptions>();
  auto* command =
      app.add_subcommand("exec", "Run an enabled program once in the guest, shim injected");
  command->footer(
      "Runs the entry's program with its arguments, then the words after '--', with exactly the\n"
      "environment its LaunchAgent has (injection variable, profile, guard file, entry env),\n"
      "from '/'. lume-unlock exits with the program's exit status. Only programs on the\n"
      "enablement list run (see 'lume-unlock allow list NAME'); others exit with 2.");
  command->add_option("name", options->vm, "The Lume VM")->required();
  command->add_option("entry", options->entry, "The entry of the enablement list")->required();
  command->add_option("args", options->args, "Extra arguments, after '--'");
  add_connection_options(*command, options->connection);
  command->callback([options, &context] { context.exit_status = run_exec(*options, context); });
}

void register_ssh(CLI::App& app, Context& context) {
  auto options = std::make_shared<ExecOptions>();
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
  command->add_option("command", options->args, "The command and its arguments, after '--'");
  add_connection_options(*command, options->connection);
  command->callback([options, &context] { context.exit_status = run_ssh(*options, context); });
}

} // namespace lume_unlock::cli
