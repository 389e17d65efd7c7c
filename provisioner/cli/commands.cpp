#include "cli/commands.hpp"

namespace lume_unlock::cli {

// The one list of commands (one file per command under cli/), in the order --help shows them.
// A command is added here once it really works, so --help never advertises what does not run.
void register_commands(CLI::App& app, Context& context, int& exit_code) {
  register_create(app, context, exit_code);
  register_clone(app, context, exit_code);
  register_pull(app, context, exit_code);
  register_status(app, context, exit_code);
  register_verify(app, context, exit_code);
  register_remove(app, context, exit_code);
  register_allow(app, context, exit_code);
  register_exec(app, context, exit_code);
  register_bench(app, context, exit_code);
  register_report(app, context, exit_code);
  register_ssh(app, context, exit_code);
  register_bake(app, context, exit_code);
  register_lock(app, context, exit_code);
  register_resolve(app, context, exit_code);
  register_doctor(app, context, exit_code);
  register_inspect_log(app, context, exit_code);
  register_bundle_push(app, context, exit_code);
  register_key(app, context, exit_code);
  register_sign(app, context, exit_code);
  register_verify_signature(app, context, exit_code);
  register_completions(app, context); // hidden: generates shell completion from this list
}

} // namespace lume_unlock::cli
