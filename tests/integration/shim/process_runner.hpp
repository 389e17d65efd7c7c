#pragma once
// Runs a program with exactly the environment given and captures its exit code, stdout and
// stderr (through temporary files, so neither pipe can fill up and block).
#include <map>
#include <string>
#include <vector>

namespace lume_unlock::test {

struct ProcessResult {
  int exit_code = -1; // -1 when the program could not be started or did not exit normally
  std::string out;
  std::string err;
};

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env);

} // namespace lume_unlock::test
