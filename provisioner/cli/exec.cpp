#include "cli/exec.hpp"

#include "apply/enablement_apply.hpp"
#include "apply/llama_runs.hpp"
#include "cli/connection_flags.hpp"
#include "cli/remote_command.hpp"
#include "cli/vm_guest.hpp"
#include "util/edit_distance.hpp"
#include "util/text_check.hpp"

#include <memory>
#include <string>
#include <vector>

namespace lume_unlock::cli {

namespace {

struct ExecOptions {
  std::string vm;
  std::string entry;
  std::vector<std::string> args;
  guest::ConnectionOptions connection;
};

int run_exec(const ExecOptions& options, Context& context) {
  auto session = connect_vm_guest(context, options.vm, options.connection);
  auto view = apply::read_guest_enablement(*session, options.vm).value_or_throw();
  const enablement::EnablementEntry* entry = view.list.find(options.entry);
  if (entry == nullptr) {
    const auto suggestion = util::closest_match(options.entry, view.list.names());
    throw Error(ErrorCategory::usage,
                "exec " + util::quote_for_message(options.entry),
                "it is not on the enablement list of VM " + util::quote_for_message(options.vm) +
                    " (" + view.target.layout.enablement_json_path() + ")",
                suggestion ? "did you mean " + util::quote_for_message(*suggestion) + "?"
                           : "enable it first: 'lume-unlock allow add " + options.vm + " " +
                                 options.entry + " --no-agent --program PATH'");
  }
  const std::string command =
      apply::exec_command_line(*entry, view.target, options.args).value_or_throw();
  return run_remote_command(context,
                            *session,
                            command,
                            "exec " + util::quote_for_message(options.entry),
                            {{"vm", options.vm}, {"entry", options.entry}});
}

} // namespace

void register_exec(CLI::App& app, Context& context, int& exit_code) {
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
  command->callback([options, &context, &exit_code] { exit_code = run_exec(*options, context); });
}

} // namespace lume_unlock::cli
