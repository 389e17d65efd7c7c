#pragma once

#include <iosfwd>

namespace lume_unlock::cli {

/// Runs the lume-unlock command line: parses `argv`, runs the chosen command and returns the
/// process exit code (DESIGN §9). Output goes to `out`/`err`; `terminal` says whether they are
/// terminals (progress bars and colours).
int run_cli(int argc,
            const char* const* argv,
            std::ostream& out,
            std::ostream& err,
            bool out_is_terminal = false,
            bool err_is_terminal = false);

} // namespace lume_unlock::cli
