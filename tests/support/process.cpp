#include "support/process.hpp"

#include "support/file_io.hpp"
#include "support/temp_dir.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace lume_unlock::test {

namespace {

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) {
      env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  for (const auto& [k, v] : extra) {
    env[k] = v;
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : env) {
    out.push_back(k + "=" + v);
  }
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

int decode_status(int status) {
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  if (WIFSIGNALED(status)) {
    return -WTERMSIG(status);
  }
  return -1;
}

} // namespace

ChildProcess::ChildProcess(Options options) : m_options(std::move(options)) {
  if (m_options.argv.empty()) {
    throw std::invalid_argument("ChildProcess needs an argv");
  }
  std::filesystem::create_directories(m_options.log_dir.empty() ? "." : m_options.log_dir);
  const std::string base =
      (m_options.log_dir.empty() ? std::string(".") : m_options.log_dir) + "/" + m_options.name;
  m_stdout_path = base + ".stdout";
  m_stderr_path = base + ".stderr";
  auto argv_strings = m_options.argv;
  auto env_strings = merged_environment(m_options.env);
  auto argv = c_strings(argv_strings);
  auto envp = c_strings(env_strings);
  int out_fd = open(m_stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err_fd = open(m_stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  m_pid = fork();
  if (m_pid == 0) {
    setpgid(0, 0); // its own process group, so stop() reaches its children too
    int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    if (!m_options.working_dir.empty() && chdir(m_options.working_dir.c_str()) != 0) {
      _exit(126);
    }
    execve(argv[0], argv.data(), envp.data());
    std::fprintf(stderr, "exec %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  close(out_fd);
  close(err_fd);
  if (m_pid < 0) {
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  }
}

ChildProcess::~ChildProcess() {
  if (m_pid > 0) {
    stop();
  }
}

bool ChildProcess::running() {
  if (m_status || m_pid <= 0) {
    return false;
  }
  int status = 0;
  pid_t r = waitpid(m_pid, &status, WNOHANG);
  if (r == m_pid) {
    m_status = decode_status(status);
    return false;
  }
  return true;
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  if (!running()) {
    return m_status.value_or(-1);
  }
  kill(-m_pid, SIGTERM);
  kill(m_pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) {
      return *m_status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(-m_pid, SIGKILL);
  kill(m_pid, SIGKILL);
  int status = 0;
  waitpid(m_pid, &status, 0);
  m_status = decode_status(status);
  return *m_status;
}

std::optional<std::string> ChildProcess::wait_for_stdout_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::string text = slurp(m_stdout_path);
    auto newline = text.find('\n');
    if (newline != std::string::npos) {
      return text.substr(0, newline);
    }
    if (!running() || std::chrono::steady_clock::now() >= deadline) {
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string ChildProcess::stdout_text() const {
  return slurp(m_stdout_path);
}
std::string ChildProcess::stderr_text() const {
  return slurp(m_stderr_path);
}

CommandOutput run_command(const std::vector<std::string>& argv_in,
                          const std::map<std::string, std::string>& env,
                          const std::string& stdin_bytes) {
  TempDir dir("run-command");
  const std::string in_path = dir / "stdin";
  std::ofstream(in_path, std::ios::binary) << stdin_bytes;
  auto argv_strings = argv_in;
  auto env_strings = merged_environment(env);
  auto argv = c_strings(argv_strings);
  auto envp = c_strings(env_strings);
  const std::string out_path = dir / "stdout";
  const std::string err_path = dir / "stderr";
  pid_t pid = fork();
  if (pid == 0) {
    int in_fd = open(in_path.c_str(), O_RDONLY);
    int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    execve(argv[0], argv.data(), envp.data());
    std::fprintf(stderr, "exec %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return {decode_status(status), slurp(out_path), slurp(err_path)};
}

int free_loopback_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    throw std::runtime_error("cannot bind a loopback port");
  }
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool wait_for_tcp(int port, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    bool connected = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    if (connected) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && (std::string(ci) == "true" || std::string(ci) == "1");
}

} // namespace lume_unlock::test
