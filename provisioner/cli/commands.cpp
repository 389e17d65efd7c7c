#include "commands.hpp"

#include "cli/allow.hpp"
#include "cli/bake.hpp"
#include "cli/bench.hpp"
#include "cli/bundle_push.hpp"
#include "cli/completions.hpp"
#include "cli/create.hpp"
#include "cli/doctor.hpp"
#include "cli/exec.hpp"
#include "cli/inspect_log.hpp"
#include "cli/key.hpp"
#include "cli/lock.hpp"
#include "cli/pull.hpp"
#include "cli/remove.hpp"
#include "cli/report.hpp"
#include "cli/resolve.hpp"
#include "cli/sign.hpp"
#include "cli/ssh.hpp"
#include "cli/status.hpp"
#include "cli/verify.hpp"
#include "cli/verify_signature.hpp"

namespace lume_unlock::cli {

// The one list of commands (one file per command under cli/), in the order --help shows them.
// A command is added here once it really works, so --help never advertises what does not run.
void register_commands(CLI::App& app, Context& context, int& exit_code) {
  register_create(app, context, exit_code);
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
