#pragma once

#include <string>
#include <vector>

namespace lume_unlock::test {

/// What one in-process run of the lume-unlock command line produced.
struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs lume-unlock in-process (cli::run_cli) with `args` after the program name, capturing
/// stdout and stderr (neither is a terminal).
CliRun run_lume_unlock(const std::vector<std::string>& args);

} // namespace lume_unlock::test
