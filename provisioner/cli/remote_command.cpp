#include "cli/remote_command.hpp"

namespace lume_unlock::cli {

int run_remote_command(Context& context,
                       guest::GuestSession& session,
                       const std::string& command_line,
                       const std::string& subject,
                       nlohmann::json fields) {
  guest::CommandResult result = session.run(command_line).value_or_throw();
  context.debug("remote commands run: " + std::to_string(session.command_count()));
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
    // Remote output need not be UTF-8: invalid bytes become U+FFFD rather than failing.
    context.out << fields.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    context.out << result.stdout_text;
    context.err << result.stderr_text;
  }
  return result.exit_status;
}

} // namespace lume_unlock::cli
