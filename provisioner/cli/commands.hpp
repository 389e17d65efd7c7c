#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

namespace lume_unlock::cli {

/// Adds every command to `app`. Each command's callback runs it with `context` and stores its
/// exit code in `exit_code`.
void register_commands(CLI::App& app, Context& context, int& exit_code);

// One per command, in the order --help shows them (the synopsis is the command's --help; DESIGN
// §9 has the flags and exit codes).
void register_create(CLI::App& app, Context& context, int& exit_code);
void register_clone(CLI::App& app, Context& context, int& exit_code);
void register_pull(CLI::App& app, Context& context, int& exit_code);
void register_status(CLI::App& app, Context& context, int& exit_code);
void register_verify(CLI::App& app, Context& context, int& exit_code);
void register_remove(CLI::App& app, Context& context, int& exit_code);
void register_allow(CLI::App& app, Context& context, int& exit_code);
void register_exec(CLI::App& app, Context& context, int& exit_code);
void register_ssh(CLI::App& app, Context& context, int& exit_code);
void register_bench(CLI::App& app, Context& context, int& exit_code);
void register_report(CLI::App& app, Context& context, int& exit_code);
void register_bake(CLI::App& app, Context& context, int& exit_code);
void register_lock(CLI::App& app, Context& context, int& exit_code);
void register_resolve(CLI::App& app, Context& context, int& exit_code);
void register_doctor(CLI::App& app, Context& context, int& exit_code);
void register_inspect_log(CLI::App& app, Context& context, int& exit_code);
void register_bundle_push(CLI::App& app, Context& context, int& exit_code);
void register_key(CLI::App& app, Context& context, int& exit_code);
void register_sign(CLI::App& app, Context& context, int& exit_code);
void register_verify_signature(CLI::App& app, Context& context, int& exit_code);
/// The hidden `completions bash|zsh`: the script generated from `app`'s own command and option
/// tables (the build writes it, `cmake --install` installs it).
void register_completions(CLI::App& app, Context& context);

} // namespace lume_unlock::cli
