#include "support/lume_sim.hpp"

#include <filesystem>
#include <regex>

namespace lume_unlock::test {

LumeSim::LumeSim(const std::string& binary,
                 std::vector<std::string> extra_args,
                 std::map<std::string, std::string> env)
    : m_dir("lume-sim"), m_home(m_dir / "home") {
  if (!std::filesystem::exists(binary)) {
    m_failure = "lume-sim binary not found at " + binary;
    return;
  }
  std::filesystem::create_directories(m_home);
  ChildProcess::Options options;
  options.argv = {binary, "--port", "0", "--home", m_home};
  options.argv.insert(options.argv.end(), extra_args.begin(), extra_args.end());
  options.env = std::move(env);
  options.log_dir = m_dir / "logs";
  options.name = "lume-sim";
  m_process = std::make_unique<ChildProcess>(options);
  auto line = m_process->wait_for_stdout_line(std::chrono::seconds(10));
  std::smatch m;
  static const std::regex k_port_line(R"(^\{"port":([0-9]+),"pid":[0-9]+\}$)");
  if (!line || !std::regex_match(*line, m, k_port_line)) {
    m_failure = "lume-sim did not start: " + m_process->stderr_text();
    m_process->stop();
    return;
  }
  m_port = std::stoi(m[1].str());
}

} // namespace lume_unlock::test
