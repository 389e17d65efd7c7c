#pragma once

#include "cli/context.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace lume_unlock::cli {

/// The shell completion script for `shell` ("bash" or "zsh"), generated from `root`'s own
/// command and option tables: the commands and subcommands each command has, the options each
/// accepts, and which options take a value (their value completes as a file name). Hidden
/// commands and options are left out. Any other shell is a usage Error.
std::string completion_script(const CLI::App& root, const std::string& shell);

/// The hidden `lume-unlock completions bash|zsh` command: prints completion_script() for the
/// application it is registered in. The build writes its output, and `cmake --install` installs it.
void register_completions(CLI::App& app, Context& context);

} // namespace lume_unlock::cli
