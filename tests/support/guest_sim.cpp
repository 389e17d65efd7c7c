#include "support/guest_sim.hpp"

#include "support/process.hpp"

#include <nlohmann/json.hpp>

namespace lume_unlock::test {

GuestSim::GuestSim(std::string dir) : m_dir(std::move(dir)) {}

GuestSim::~GuestSim() {
  if (m_started) {
    stop();
  }
}

std::string GuestSim::script() {
  return LUME_UNLOCK_GUEST_SIM;
}

std::optional<std::string> GuestSim::start(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {"/bin/bash", script(), "start", "--dir", m_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  CommandOutput output = run_command(argv);
  if (output.exit_status != 0) {
    return "guest-sim start failed (exit " + std::to_string(output.exit_status) +
           "): " + output.stderr_text;
  }
  auto doc = nlohmann::json::parse(output.stdout_text, nullptr, false);
  if (!doc.is_object()) {
    return "guest-sim start printed no JSON: " + output.stdout_text;
  }
  m_info.port = doc.at("port").get<int>();
  m_info.user = doc.at("user").get<std::string>();
  m_info.password = doc.at("password").is_null()
                        ? std::nullopt
                        : std::optional<std::string>(doc.at("password").get<std::string>());
  m_info.home = doc.at("home").get<std::string>();
  m_info.shared_files = doc.at("shared_files").get<std::string>();
  m_info.pid = doc.at("pid").get<int>();
  m_started = true;
  return std::nullopt;
}

int GuestSim::stop() {
  m_started = false;
  return run_command({"/bin/bash", script(), "stop", "--dir", m_dir}).exit_status;
}

} // namespace lume_unlock::test
