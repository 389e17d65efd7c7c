// The simulator's core: the route table, request dispatch, VM lookup and details, and the
// scheduler. The endpoints live by family in sim_vms, sim_sessions, sim_images, sim_settings.
#include "sim_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

namespace lume_sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* const k_invalid_body = "Invalid request body";

Reply not_found_route() {
  Reply r;
  r.status = 404;
  r.content_type = "text/plain";
  r.body = "Not found";
  return r;
}

std::vector<std::string> pieces(const std::string& target) {
  std::vector<std::string> out;
  std::string piece;
  for (char c : target) {
    if (c == '/') {
      if (!piece.empty()) {
        out.push_back(piece);
      }
      piece.clear();
    } else {
      piece.push_back(c);
    }
  }
  if (!piece.empty()) {
    out.push_back(piece);
  }
  return out;
}

/// Query parameters of a raw target, decoded twice like Lume (§1.4 step 5).
std::map<std::string, std::string> query_of(const std::string& target) {
  std::map<std::string, std::string> out;
  auto q = target.find('?');
  if (q == std::string::npos) {
    return out;
  }
  std::stringstream s(target.substr(q + 1));
  std::string pair;
  while (std::getline(s, pair, '&')) {
    auto eq = pair.find('=');
    std::string key = percent_decode(pair.substr(0, eq));
    std::string value = eq == std::string::npos ? "" : pair.substr(eq + 1);
    out[key] = percent_decode(percent_decode(value));
  }
  return out;
}

/// `nc -z -w 2 ADDRESS PORT`: true when something accepts a TCP connection.
bool tcp_port_open(const std::string& address, int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return false;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  bool open = false;
  if (inet_pton(AF_INET, address.c_str(), &addr.sin_addr) == 1) {
    int r = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    if (r == 0) {
      open = true;
    } else if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, 2000) == 1) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        open = err == 0;
      }
    }
  }
  close(fd);
  return open;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Scheduler

Scheduler::Scheduler(std::mutex& state_mutex)
    : m_state_mutex(state_mutex), m_thread([this] { loop(); }) {}

Scheduler::~Scheduler() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  m_thread.join();
}

void Scheduler::after(std::chrono::milliseconds delay, std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_tasks.push({std::chrono::steady_clock::now() + delay, m_next++, std::move(task)});
  }
  m_wake.notify_all();
}

void Scheduler::loop() {
  std::unique_lock<std::mutex> lock(m_mutex);
  while (!m_stopping) {
    if (m_tasks.empty()) {
      m_wake.wait(lock);
      continue;
    }
    auto when = m_tasks.top().when;
    if (std::chrono::steady_clock::now() < when) {
      m_wake.wait_until(lock, when);
      continue;
    }
    auto task = m_tasks.top().run;
    m_tasks.pop();
    lock.unlock();
    {
      std::lock_guard<std::mutex> state(m_state_mutex);
      task();
    }
    lock.lock();
  }
}

// ---------------------------------------------------------------------------------------------
// Simulator

Simulator::Simulator(Options options) : m_options(std::move(options)), m_scheduler(m_mutex) {
  m_locations.push_back({"home", fs::absolute(m_options.home)});
  m_cache_directory = (fs::absolute(m_options.home) / "cache").string();
  fs::create_directories(m_options.home);
  if (!m_options.log_dir.empty()) {
    // launchd opens the LaunchAgent's StandardOutPath/StandardErrorPath before Lume starts.
    std::ofstream(fs::path(m_options.log_dir) / "lume_daemon.log", std::ios::app);
    std::ofstream(fs::path(m_options.log_dir) / "lume_daemon.error.log", std::ios::app);
  }
  // Reference §2, in Server.setupRoutes order.
  m_routes = {
      {"GET", {"lume", "vms"}, &Simulator::list_vms},
      {"GET", {"lume", "vms", ":name"}, &Simulator::get_vm},
      {"DELETE", {"lume", "vms", ":name"}, &Simulator::delete_vm},
      {"POST", {"lume", "vms"}, &Simulator::create_vm},
      {"POST", {"lume", "vms", "clone"}, &Simulator::clone_vm},
      {"PATCH", {"lume", "vms", ":name"}, &Simulator::patch_vm},
      {"POST", {"lume", "vms", ":name", "run"}, &Simulator::run_vm},
      {"POST", {"lume", "vms", ":name", "stop"}, &Simulator::stop_vm},
      {"POST", {"lume", "vms", ":name", "setup"}, &Simulator::setup_vm},
      {"GET", {"lume", "ipsw"}, &Simulator::get_ipsw},
      {"POST", {"lume", "pull"}, &Simulator::pull_sync},
      {"POST", {"lume", "pull", "start"}, &Simulator::pull_start},
      {"POST", {"lume", "prune"}, &Simulator::prune},
      {"GET", {"lume", "images"}, &Simulator::list_images},
      {"GET", {"lume", "config"}, &Simulator::get_config},
      {"POST", {"lume", "config"}, &Simulator::post_config},
      {"GET", {"lume", "config", "locations"}, &Simulator::list_locations},
      {"POST", {"lume", "config", "locations"}, &Simulator::add_location},
      {"DELETE", {"lume", "config", "locations", ":name"}, &Simulator::remove_location},
      {"GET", {"lume", "logs"}, &Simulator::get_logs},
      {"POST",
       {"lume", "config", "locations", "default", ":name"},
       &Simulator::set_default_location},
      {"POST", {"lume", "vms", "push"}, &Simulator::push},
      {"GET", {"lume", "host", "status"}, &Simulator::host_status},
  };
}

std::string Simulator::encode(const json& j) {
  std::string compact = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(compact.size());
  // '/' only occurs inside strings in compact JSON, so escaping every one is exact.
  for (char c : compact) {
    if (c == '/') {
      out += "\\/";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

void Simulator::log(const std::string& line) const {
  std::cerr << "lume-sim: " << line << std::endl;
}

void Simulator::lume_print(const std::string& line) const {
  std::lock_guard<std::mutex> lock(m_print_mutex);
  std::cout << line << std::endl;
  if (!m_options.log_dir.empty()) {
    std::ofstream(fs::path(m_options.log_dir) / "lume_daemon.log", std::ios::app) << line << '\n';
  }
}

void Simulator::lume_logger_error(const std::string& message) const {
  // Logger.swift: "[<ISO8601DateFormatter timestamp>] ERROR: <message>", printed to stdout.
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  lume_print("[" + std::string(stamp) + "] ERROR: " + message);
}

ConfiguredRegistry Simulator::configured_registry() const {
  std::string host = m_options.registry;
  if (host.find("://") != std::string::npos) {
    host = host.substr(host.find("://") + 3); // Lume keeps a host; it always speaks https
  }
  host = host.substr(0, host.find('/'));
  return ConfiguredRegistry{host, m_options.registry_organization};
}

Reply Simulator::handle(const std::string& method,
                        const std::string& target,
                        const std::string& body) {
  // Route matching on the raw target, query included (§1.4): a query string makes the last
  // piece differ from a literal, so only ":name"-terminated routes tolerate one.
  const std::vector<std::string> got = pieces(target);
  for (const Route& route : m_routes) {
    if (route.method != method || route.pieces.size() != got.size()) {
      continue;
    }
    Params params;
    bool match = true;
    for (std::size_t i = 0; i < got.size() && match; ++i) {
      if (route.pieces[i].front() == ':') {
        std::string value = got[i];
        params.push_back(value.substr(0, value.find('?')));
      } else {
        match = route.pieces[i] == got[i];
      }
    }
    if (match) {
      try {
        return (this->*route.handler)(params, query_of(target), body);
      } catch (const DecodeFailure&) {
        return message(400, k_invalid_body);
      } catch (const std::exception& e) {
        return message(500, e.what());
      }
    }
  }
  return not_found_route();
}

std::optional<Simulator::Found>
Simulator::resolve_storage(const std::optional<std::string>& storage, std::string& error) {
  if (!storage) {
    for (const auto& l : m_locations) {
      if (l.name == m_default_location) {
        return Found{l.path, l.name};
      }
    }
  } else if (storage->find('/') != std::string::npos || storage->find('\\') != std::string::npos) {
    fs::create_directories(*storage); // Lume creates a direct path as a side effect (§3.0)
    return Found{fs::path(*storage), *storage};
  } else if (*storage == "ephemeral") {
    const char* tmp = std::getenv("TMPDIR");
    return Found{fs::path(tmp != nullptr ? tmp : "/tmp"), "ephemeral"};
  } else {
    for (const auto& l : m_locations) {
      if (l.name == *storage) {
        return Found{l.path, l.name};
      }
    }
  }
  error = "VM location not found: " + storage.value_or(m_default_location);
  return std::nullopt;
}

std::optional<Simulator::Found> Simulator::find_vm(const std::string& raw_name,
                                                   const std::optional<std::string>& storage,
                                                   std::string& error) {
  const std::string name = normalized_name(raw_name);
  std::vector<Found> candidates;
  if (storage) {
    auto location = resolve_storage(storage, error);
    if (!location) {
      return std::nullopt;
    }
    candidates.push_back(*location);
  } else {
    for (const auto& l : m_locations) {
      candidates.push_back({l.path, l.name});
    }
  }
  for (const auto& c : candidates) {
    if (is_vm_dir(c.dir / name)) {
      return Found{c.dir / name, c.location_name};
    }
  }
  error = "Virtual machine not found: " + name;
  return std::nullopt;
}

bool Simulator::is_running(const fs::path& dir) const {
  return m_running.count(fs::weakly_canonical(dir).string()) != 0;
}

std::size_t Simulator::running_count() const {
  return m_running.size();
}

std::string Simulator::status_of(const fs::path& dir) {
  std::error_code ec;
  const bool provisioning =
      fs::exists(dir / ".provisioning", ec) &&
      !(fs::exists(dir / "disk.img", ec) && fs::exists(dir / "nvram.bin", ec));
  if (provisioning) {
    auto marker = read_json(dir / ".provisioning");
    if (marker && marker->contains("startedAt") && (*marker)["startedAt"].is_number() &&
        unix_now() - (*marker)["startedAt"].get<std::int64_t>() > 8 * 3600) {
      return "provisioning (stale)";
    }
    return "provisioning";
  }
  return is_running(dir) ? "running" : "stopped";
}

json Simulator::details(const Found& vm) {
  json config = read_json(vm.dir / "config.json").value_or(json::object());
  auto number = [&](const char* key) -> std::uint64_t {
    return config.contains(key) && config[key].is_number_unsigned()
               ? config[key].get<std::uint64_t>()
               : 0;
  };
  auto text = [&](const char* key, const char* fallback) -> std::string {
    return config.contains(key) && config[key].is_string() ? config[key].get<std::string>()
                                                           : fallback;
  };
  std::error_code ec;
  json disk = {{"allocated", 0}, {"total", number("diskSize")}};
  struct stat st {};
  if (::stat((vm.dir / "disk.img").c_str(), &st) == 0) {
    disk = {{"allocated", static_cast<std::uint64_t>(st.st_blocks) * 512},
            {"total", static_cast<std::uint64_t>(st.st_size)}};
  }
  const std::string status = status_of(vm.dir);
  json d = {{"name", vm.dir.filename().string()},
            {"os", text("os", "")},
            {"cpuCount", number("cpuCount")},
            {"memorySize", number("memorySize")},
            {"diskSize", disk},
            {"display", text("display", "1024x768")},
            {"status", status},
            {"provisioningOperation", nullptr},
            {"vncUrl", nullptr},
            {"ipAddress", nullptr},
            {"sshAvailable", nullptr},
            {"locationName", vm.location_name},
            {"sharedDirectories", nullptr},
            {"networkMode", text("networkMode", "nat")},
            {"downloadProgress", nullptr}};
  if (status.rfind("provisioning", 0) == 0) {
    auto marker = read_json(vm.dir / ".provisioning");
    d["provisioningOperation"] =
        marker && marker->contains("operation") ? (*marker)["operation"] : json("ipsw_install");
  }
  if (status == "running") {
    const RunningVm& run = m_running.at(fs::weakly_canonical(vm.dir).string());
    if (run.vnc_url) {
      d["vncUrl"] = *run.vnc_url;
    }
    if (!m_options.guest_address.empty() && std::chrono::steady_clock::now() >= run.booted_at) {
      d["ipAddress"] = m_options.guest_address;
      d["sshAvailable"] = tcp_port_open(m_options.guest_address, m_options.guest_ssh_port);
    }
  }
  return d;
}

} // namespace lume_sim
