#pragma once

#include "util/result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace lume_unlock::util {

/// How a child process ended and what it printed.
struct ChildOutcome {
  /// The exit status, or 128 + the signal's number when a signal ended it (as a shell says).
  int exit_status = -1;
  std::string stdout_text;
  std::string stderr_text;
};

/// Runs `argv` (argv[0] a path; no shell, so nothing in it is interpreted) with this process's
/// environment and no standard input, and waits for it, collecting both output streams in
/// memory. Fails only when the process cannot be started (the reason is errno's text).
Result<ChildOutcome> run_child(const std::vector<std::string>& argv);

/// The absolute path of the running executable with symlinks resolved (so a Homebrew
/// `bin/lume-unlock` link leads to the keg it came from): /proc/self/exe on Linux,
/// _NSGetExecutablePath on macOS. Nothing when the system cannot say.
std::optional<std::string> executable_path();

} // namespace lume_unlock::util
