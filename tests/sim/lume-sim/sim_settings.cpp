// Settings: config, storage locations, logs, host status (reference/lume-api.md §3.17-§3.20).
#include "sim_support.hpp"

#include <fstream>
#include <sstream>

namespace lume_sim {

namespace fs = std::filesystem;
using nlohmann::json;

Reply Simulator::get_config(const Params&,
                            const std::map<std::string, std::string>&,
                            const std::string&) {
  json locations = json::array();
  for (const auto& l : m_locations) {
    locations.push_back({{"name", l.name}, {"path", l.path.string()}});
  }
  return json_reply(200,
                    {{"vmLocations", locations},
                     {"defaultLocationName", m_default_location},
                     {"cacheDirectory", m_cache_directory},
                     {"cachingEnabled", m_caching_enabled},
                     {"registry",
                      {{"type", "ghcr"},
                       {"ghcr",
                        {{"registry", configured_registry().registry},
                         {"organization", configured_registry().organization}}}}},
                     {"telemetryEnabled", false}});
}

Reply Simulator::post_config(const Params&,
                             const std::map<std::string, std::string>&,
                             const std::string& text) {
  Body b(text);
  auto home = b.optional_string("homeDirectory");
  auto cache = b.optional_string("cacheDirectory");
  auto caching = b.optional_bool("cachingEnabled");
  if (home) {
    fs::create_directories(*home);
    for (auto& l : m_locations) {
      if (l.name == "home") {
        l.path = fs::absolute(*home);
      }
    }
  }
  if (cache) {
    m_cache_directory = *cache;
  }
  if (caching) {
    m_caching_enabled = *caching;
  }
  return message(200, "Configuration updated successfully");
}

Reply Simulator::list_locations(const Params&,
                                const std::map<std::string, std::string>&,
                                const std::string&) {
  auto sorted = m_locations;
  std::sort(
      sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  json out = json::array();
  for (const auto& l : sorted) {
    out.push_back({{"name", l.name}, {"path", l.path.string()}});
  }
  return json_reply(200, out);
}

Reply Simulator::add_location(const Params&,
                              const std::map<std::string, std::string>&,
                              const std::string& text) {
  Body b(text);
  const std::string name = b.string("name");
  const std::string path = b.string("path");
  static const std::regex k_location_name("^[a-zA-Z0-9_-]+$");
  if (!std::regex_match(name, k_location_name)) {
    return message(400, "Invalid location name: " + name);
  }
  for (const auto& l : m_locations) {
    if (l.name == name) {
      return message(400, "Location already exists: " + name);
    }
  }
  fs::create_directories(path);
  m_locations.push_back({name, fs::absolute(path)});
  return json_reply(200,
                    {{"message", "Location added successfully"}, {"name", name}, {"path", path}});
}

Reply Simulator::remove_location(const Params& p,
                                 const std::map<std::string, std::string>&,
                                 const std::string&) {
  if (p[0] == m_default_location) {
    return message(400, "Cannot remove the default location: " + p[0]);
  }
  for (auto it = m_locations.begin(); it != m_locations.end(); ++it) {
    if (it->name == p[0]) {
      m_locations.erase(it);
      return message(200, "Location removed successfully");
    }
  }
  return message(400, "VM location not found: " + p[0]);
}

Reply Simulator::set_default_location(const Params& p,
                                      const std::map<std::string, std::string>&,
                                      const std::string&) {
  for (const auto& l : m_locations) {
    if (l.name == p[0]) {
      m_default_location = p[0];
      return message(200, "Default location set successfully");
    }
  }
  return message(400, "VM location not found: " + p[0]);
}

Reply Simulator::get_logs(const Params&,
                          const std::map<std::string, std::string>&,
                          const std::string&) {
  // Handlers.swift handleGetLogs: the LaunchAgent's files, or these texts when absent.
  const auto read_or = [](const fs::path& path, const char* missing) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      return std::string(missing);
    }
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const fs::path dir = m_options.log_dir.empty() ? fs::path() : fs::path(m_options.log_dir);
  return json_reply(
      200,
      {{"info",
        dir.empty() ? "Info log file not found"
                    : read_or(dir / "lume_daemon.log", "Info log file not found")},
       {"error",
        dir.empty() ? "Error log file not found"
                    : read_or(dir / "lume_daemon.error.log", "Error log file not found")}});
}

Reply Simulator::host_status(const Params&,
                             const std::map<std::string, std::string>&,
                             const std::string&) {
  const std::uint64_t count = running_count();
  return json_reply(200,
                    {{"status", "healthy"},
                     {"vm_count", count},
                     {"max_vms", 2},
                     {"available_slots", count >= 2 ? 0 : 2 - count},
                     {"version", "1.0.0"}});
}

} // namespace lume_sim
