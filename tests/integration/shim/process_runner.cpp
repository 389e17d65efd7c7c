#include "process_runner.hpp"

#include "support/file_io.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace lume_unlock::test {
namespace {

std::string slurp_and_remove(const std::string& path) {
  std::string content = slurp(path);
  ::unlink(path.c_str());
  return content;
}

int temp_file(std::string& path) {
  const char* dir = std::getenv("TMPDIR");
  path = std::string(dir != nullptr ? dir : "/tmp") + "/lume-unlock-run-XXXXXX";
  return ::mkstemp(path.data());
}

} // namespace

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env) {
  ProcessResult result;
  std::string out_path, err_path;
  const int out_fd = temp_file(out_path);
  const int err_fd = temp_file(err_path);
  if (out_fd < 0 || err_fd < 0 || argv.empty())
    return result;

  std::vector<std::string> env_strings;
  for (const auto& [key, value] : env)
    env_strings.push_back(key + "=" + value);
  std::vector<char*> c_argv, c_env;
  for (const std::string& a : argv)
    c_argv.push_back(const_cast<char*>(a.c_str()));
  for (const std::string& e : env_strings)
    c_env.push_back(const_cast<char*>(e.c_str()));
  c_argv.push_back(nullptr);
  c_env.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::execve(c_argv[0], c_argv.data(), c_env.data());
    ::_exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  }
  result.out = slurp_and_remove(out_path);
  result.err = slurp_and_remove(err_path);
  return result;
}

} // namespace lume_unlock::test
