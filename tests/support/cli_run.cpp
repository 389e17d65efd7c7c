#include "support/cli_run.hpp"

#include "cli/app.hpp"

#include <sstream>

namespace lume_unlock::test {

CliRun run_lume_unlock(const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"lume-unlock"};
  for (const auto& arg : args) {
    argv.push_back(arg.c_str());
  }
  std::ostringstream out;
  std::ostringstream err;
  const int code = cli::run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

} // namespace lume_unlock::test
