#include "cli/exec.hpp"

#include "cli/vm_guest.hpp"
#include "pipeline/enablement_apply.hpp"
#include "pipeline/exec_entry.hpp"
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
  auto view = pipeline::read_guest_enablement(*session, options.vm).value_or_throw();
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
      pipeline::exec_command_line(*entry, view.target, options.args).value_or_throw();
  guest::CommandResult result = session->run(command).value_or_throw();
  context.debug("remote commands run: " + std::to_string(session->command_count()));
  if (result.exit_status < 0) {
    throw Error(ErrorCategory::guest,
                "exec " + util::quote_for_message(options.entry),
                "it ended without an exit status (killed by a signal?)",
                "run it again; check the guest's logs if it keeps happening");
  }
  if (context.json()) {
    nlohmann::json document = {{"vm", options.vm},
                               {"entry", options.entry},
                               {"exit_status", result.exit_status},
                               {"stdout", result.stdout_text},
                               {"stderr", result.stderr_text}};
    context.out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    context.out << result.stdout_text;
    context.err << result.stderr_text;
  }
  return result.exit_status;
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
  guest::add_connection_options(*command, options->connection);
  command->callback([options, &context, &exit_code] { exit_code = run_exec(*options, context); });
}

} // namespace lume_unlock::cli
