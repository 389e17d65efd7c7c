#include "sim.hpp"

#include "guest_home_archive.hpp"
#include "registry_io.hpp"

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
#include <random>
#include <regex>
#include <sstream>

namespace lume_sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Foundation's text for ArgumentParser.ValidationError, which is not a LocalizedError
// (reference §1.6): Lume sends this instead of the intended message.
const char* const k_validation_error =
    "The operation couldn\u2019t be completed. (ArgumentParser.ValidationError error 1.)";
const char* const k_invalid_body = "Invalid request body";

Reply json_reply(int status, const json& j) {
  Reply r;
  r.status = status;
  r.body = Simulator::encode(j);
  return r;
}

Reply message(int status, const std::string& text) {
  return json_reply(status, {{"message", text}});
}

Reply not_found_route() {
  Reply r;
  r.status = 404;
  r.content_type = "text/plain";
  r.body = "Not found";
  return r;
}

/// A request body decoded the way Swift's Codable would: wrong types or missing required keys
/// fail the whole decode; unknown keys are ignored; null counts as absent for optionals.
struct DecodeFailure {};

class Body {
public:
  explicit Body(const std::string& text) {
    if (text.empty()) {
      throw DecodeFailure{};
    }
    m_j = json::parse(text, nullptr, false);
    if (!m_j.is_object()) {
      throw DecodeFailure{};
    }
  }
  std::string string(const char* key) const {
    auto v = optional_string(key);
    if (!v) {
      throw DecodeFailure{};
    }
    return *v;
  }
  std::optional<std::string> optional_string(const char* key) const {
    const json* v = get(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_string()) {
      throw DecodeFailure{};
    }
    return v->get<std::string>();
  }
  std::optional<std::int64_t> optional_int(const char* key) const {
    const json* v = get(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (v->is_number_integer()) {
      return v->get<std::int64_t>();
    }
    if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>()) {
      return static_cast<std::int64_t>(v->get<double>());
    }
    throw DecodeFailure{};
  }
  std::int64_t integer(const char* key) const {
    auto v = optional_int(key);
    if (!v) {
      throw DecodeFailure{};
    }
    return *v;
  }
  std::optional<bool> optional_bool(const char* key) const {
    const json* v = get(key);
    if (v == nullptr) {
      return std::nullopt;
    }
    if (!v->is_boolean()) {
      throw DecodeFailure{};
    }
    return v->get<bool>();
  }
  const json* get(const char* key) const {
    auto it = m_j.find(key);
    return it == m_j.end() || it->is_null() ? nullptr : &*it;
  }

private:
  json m_j;
};

/// Lume's parseSize (reference §3.0); nullopt for anything it rejects.
std::optional<std::uint64_t> parse_size(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  for (char& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::uint64_t multiplier = 1ull << 30;
  const std::pair<const char*, std::uint64_t> suffixes[] = {
      {"tb", 1ull << 40}, {"gb", 1ull << 30}, {"mb", 1ull << 20}, {"kb", 1ull << 10}, {"b", 1}};
  for (const auto& [suffix, m] : suffixes) {
    const std::size_t n = std::strlen(suffix);
    if (s.size() >= n && s.compare(s.size() - n, n, suffix) == 0) {
      s.erase(s.size() - n);
      multiplier = m;
      break;
    }
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.pop_back();
  }
  if (s.empty() || s.find_first_not_of("0123456789.") != std::string::npos) {
    return std::nullopt;
  }
  char* end = nullptr;
  double value = std::strtod(s.c_str(), &end);
  if (*end != '\0' || value < 0) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(std::llround(value * static_cast<double>(multiplier)));
}

bool valid_display(const std::string& d) {
  static const std::regex k_display("^[0-9]+x[0-9]+$");
  if (!std::regex_match(d, k_display)) {
    return false;
  }
  auto x = d.find('x');
  return std::stol(d.substr(0, x)) > 0 && std::stol(d.substr(x + 1)) > 0;
}

std::optional<std::string> normalized_network(const std::string& n) {
  std::string lower = n;
  for (char& c : lower) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (lower == "nat" || lower == "bridged") {
    return lower;
  }
  if (lower.rfind("bridged:", 0) == 0 && n.size() > 8) {
    return "bridged:" + n.substr(8);
  }
  return std::nullopt;
}

/// get/delete/run/stop/clone/PATCH/setup rewrite "a:b" (exactly one colon) to "a_b" (§3.0).
std::string normalized_name(std::string name) {
  if (std::count(name.begin(), name.end(), ':') == 1) {
    std::replace(name.begin(), name.end(), ':', '_');
  }
  return name;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() + 0 &&
        std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
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

std::optional<std::string> query_value(const std::map<std::string, std::string>& q,
                                       const char* key) {
  auto it = q.find(key);
  return it == q.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::optional<json> read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) {
    return std::nullopt;
  }
  std::stringstream s;
  s << in.rdbuf();
  json j = json::parse(s.str(), nullptr, false);
  if (j.is_discarded()) {
    return std::nullopt;
  }
  return j;
}

/// config.json is written pretty-printed (§6.2); temp + rename so a reader never sees half.
void write_json(const fs::path& path, const json& j, bool pretty) {
  const fs::path temp = path.string() + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << (pretty ? j.dump(2) : j.dump());
  }
  fs::rename(temp, path);
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::mt19937_64& rng() {
  static std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

std::string random_mac() {
  std::uniform_int_distribution<int> byte(0, 255);
  char buffer[18];
  // Locally administered, unicast.
  std::snprintf(buffer,
                sizeof buffer,
                "%02x:%02x:%02x:%02x:%02x:%02x",
                (byte(rng()) & 0xfc) | 0x02,
                byte(rng()),
                byte(rng()),
                byte(rng()),
                byte(rng()),
                byte(rng()));
  return buffer;
}

std::string random_base64(std::size_t bytes) {
  static const char* k_alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::uniform_int_distribution<int> six(0, 63);
  std::string out;
  for (std::size_t i = 0; i < (bytes * 4 + 2) / 3; ++i) {
    out.push_back(k_alphabet[six(rng())]);
  }
  while (out.size() % 4 != 0) {
    out.push_back('=');
  }
  return out;
}

std::string vnc_password() {
  static const char* k_words[] = {"amber",
                                  "pilot",
                                  "river",
                                  "stone",
                                  "cedar",
                                  "maple",
                                  "orbit",
                                  "delta",
                                  "lunar",
                                  "quill",
                                  "tiger",
                                  "ember"};
  std::uniform_int_distribution<std::size_t> pick(0, std::size(k_words) - 1);
  std::string out;
  for (int i = 0; i < 4; ++i) {
    out += (i ? "-" : "") + std::string(k_words[pick(rng())]);
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

/// Copies a file keeping holes (disk.img is sparse; Lume clones it with APFS clonefile, and a
/// plain copy would write gigabytes of zeros).
void copy_sparse(const fs::path& from, const fs::path& to) {
  int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  int out = open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (in < 0 || out < 0) {
    if (in >= 0)
      close(in);
    if (out >= 0)
      close(out);
    throw std::runtime_error("cannot copy " + from.string());
  }
  struct stat st {};
  fstat(in, &st);
  std::vector<char> buffer(1 << 16);
  off_t data = 0;
  while ((data = lseek(in, data, SEEK_DATA)) >= 0) {
    off_t hole = lseek(in, data, SEEK_HOLE);
    for (off_t at = data; at < hole;) {
      ssize_t n = pread(
          in, buffer.data(), std::min<off_t>(hole - at, static_cast<off_t>(buffer.size())), at);
      if (n <= 0 || pwrite(out, buffer.data(), static_cast<std::size_t>(n), at) != n) {
        break;
      }
      at += n;
    }
    data = hole;
  }
  (void)!ftruncate(out, st.st_size);
  close(in);
  close(out);
}

bool is_vm_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "config.json", ec)) {
    return false;
  }
  return (fs::exists(dir / "disk.img", ec) && fs::exists(dir / "nvram.bin", ec)) ||
         fs::exists(dir / ".provisioning", ec);
}

/// Finder-like ordering: case-insensitive, digit runs compared by value.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2])))
        ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2])))
        ++j2;
      std::string na = a.substr(i, i2 - i), nb = b.substr(j, j2 - j);
      na.erase(0, std::min(na.find_first_not_of('0'), na.size()));
      nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size()));
      if (na.size() != nb.size())
        return na.size() < nb.size();
      if (na != nb)
        return na < nb;
      i = i2;
      j = j2;
      continue;
    }
    int ca = std::tolower(static_cast<unsigned char>(a[i]));
    int cb = std::tolower(static_cast<unsigned char>(b[j]));
    if (ca != cb)
      return ca < cb;
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j)
    return a.size() - i < b.size() - j;
  return a < b;
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

// --- VMs ------------------------------------------------------------------------------------

Reply Simulator::list_vms(const Params&,
                          const std::map<std::string, std::string>&,
                          const std::string&) {
  std::vector<std::pair<std::string, Found>> vms;
  for (const auto& l : m_locations) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(l.path, ec)) {
      // The scanner percent-decodes directory names (§7), so "a%20b" is looked up as "a b".
      const std::string name = percent_decode(entry.path().filename().string());
      if (entry.is_directory() && is_vm_dir(l.path / name)) {
        vms.push_back({name, Found{l.path / name, l.name}});
      }
    }
  }
  std::sort(vms.begin(), vms.end(), [](const auto& a, const auto& b) {
    return natural_less(a.first, b.first);
  });
  json out = json::array();
  for (const auto& [name, vm] : vms) {
    out.push_back(details(vm));
  }
  return json_reply(200, out);
}

Reply Simulator::get_vm(const Params& p,
                        const std::map<std::string, std::string>& q,
                        const std::string&) {
  const std::string& key = p[0];
  if (auto it = m_pulls.find(key); it != m_pulls.end()) {
    if (!it->second.failure.empty()) {
      return message(400, "Pull failed for '" + key + "': " + it->second.failure);
    }
    if (it->second.in_progress) {
      return json_reply(
          200, {{"name", key}, {"status", "pulling"}, {"downloadProgress", it->second.progress}});
    }
  }
  std::string error;
  auto vm = find_vm(key, query_value(q, "storage"), error);
  if (!vm) {
    return message(400, error);
  }
  return json_reply(200, details(*vm));
}

Reply Simulator::delete_vm(const Params& p,
                           const std::map<std::string, std::string>& q,
                           const std::string&) {
  std::string error;
  auto vm = find_vm(p[0], query_value(q, "storage"), error);
  if (!vm) {
    return message(400, error);
  }
  // A VM running inside this server is hard-stopped first (§3.5).
  if (auto running = m_running.find(fs::weakly_canonical(vm->dir).string());
      running != m_running.end()) {
    withdraw_shares(running->second);
  }
  m_running.erase(fs::weakly_canonical(vm->dir).string());
  fs::remove_all(vm->dir);
  Reply r;
  r.status = 200;
  return r; // empty body, application/json
}

Reply Simulator::create_vm(const Params&,
                           const std::map<std::string, std::string>&,
                           const std::string& text) {
  Body b(text);
  const std::string name = b.string("name");
  const std::string os = b.string("os");
  const std::int64_t cpu = b.integer("cpu");
  const std::string memory = b.string("memory");
  const std::string disk = b.string("diskSize");
  std::string display = b.string("display");
  const auto ipsw = b.optional_string("ipsw");
  const auto storage = b.optional_string("storage");
  const auto unattended = b.optional_string("unattended");
  const auto network = b.optional_string("network");

  auto memory_bytes = parse_size(memory);
  auto disk_bytes = parse_size(disk);
  if (!memory_bytes || !disk_bytes) {
    return message(400, k_validation_error);
  }
  std::string lower_os = os;
  for (char& c : lower_os) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const bool macos = lower_os == "macos";
  if (unattended && macos && *unattended != "tahoe" && *unattended != "sequoia" &&
      !fs::is_regular_file(*unattended)) {
    return message(400, "Unattended config not found: " + *unattended);
  }
  std::optional<std::string> network_mode = normalized_network(network.value_or("nat"));
  if (!network_mode) {
    return message(400, k_validation_error);
  }
  if (!macos && lower_os != "linux") {
    return message(400, k_validation_error);
  }
  if ((macos && !ipsw) || (!macos && ipsw)) {
    return message(400, k_validation_error);
  }
  std::string error;
  auto location = resolve_storage(storage, error);
  if (!location) {
    return message(400, error);
  }
  // The name is used verbatim as a path component (§7): no validation, no ':' rewrite.
  const fs::path dir = location->dir / name;
  if (fs::exists(dir)) {
    return message(400, "Virtual machine already exists with name: " + name);
  }
  if (!valid_display(display)) {
    display = "1024x768";
  }
  fs::create_directories(dir);
  write_json(dir / "config.json",
             {{"os", os},
              {"cpuCount", cpu},
              {"memorySize", *memory_bytes},
              {"diskSize", *disk_bytes},
              {"display", display},
              {"networkMode", *network_mode}},
             true);
  write_json(
      dir / ".provisioning", {{"operation", "ipsw_install"}, {"startedAt", unix_now()}}, false);
  // An IPSW path that does not exist fails the install in the background, which deletes the VM.
  const bool fail = macos && *ipsw != "latest" && !fs::is_regular_file(*ipsw);
  m_scheduler.after(std::chrono::milliseconds(m_options.create_delay_ms),
                    [this, dir, fail] { finish_create(dir, fail); });
  log("create '" + name + "' started in " + dir.string());
  return json_reply(
      202, {{"message", "VM creation started"}, {"name", name}, {"status", "provisioning"}});
}

void Simulator::finish_create(const fs::path& dir, bool fail) {
  if (!fs::exists(dir / ".provisioning")) {
    return; // deleted meanwhile
  }
  if (fail) {
    log("create in " + dir.string() + " failed: IPSW not found; deleting the VM");
    fs::remove_all(dir);
    return;
  }
  json config = read_json(dir / "config.json").value_or(json::object());
  std::string os = config.value("os", "macOS");
  const bool macos = os == "macOS" || os == "macos" || os == "MACOS" || os == "MacOS";
  config["os"] = macos ? "macOS" : "linux";
  config["macAddress"] = random_mac();
  if (macos) {
    config["hardwareModel"] = random_base64(48);
    config["machineIdentifier"] = random_base64(24);
  }
  {
    // A small sparse disk: the logical size is the requested one, nothing is allocated.
    std::ofstream(dir / "disk.img", std::ios::binary);
    fs::resize_file(dir / "disk.img", config.value("diskSize", std::uint64_t{0}));
    std::ofstream nvram(dir / "nvram.bin", std::ios::binary);
    nvram << std::string(4096, '\0');
  }
  write_json(dir / "config.json", config, true);
  fs::remove(dir / ".provisioning");
  log("create in " + dir.string() + " finished");
}

Reply Simulator::clone_vm(const Params&,
                          const std::map<std::string, std::string>&,
                          const std::string& text) {
  Body b(text);
  const std::string raw_name = b.string("name");
  const std::string new_name = b.string("newName");
  const auto source_location = b.optional_string("sourceLocation");
  const auto dest_location = b.optional_string("destLocation");
  std::string error;
  auto source = find_vm(raw_name, source_location, error);
  if (!source) {
    return message(400, error);
  }
  const std::string source_name = source->dir.filename().string();
  if (status_of(source->dir).rfind("provisioning", 0) == 0) {
    return message(400, "Virtual machine is still being provisioned: " + source_name);
  }
  if (is_running(source->dir)) {
    return message(400, "Virtual machine already running: " + source_name);
  }
  auto dest = resolve_storage(dest_location, error);
  if (!dest) {
    return message(400, error);
  }
  const fs::path target = dest->dir / normalized_name(new_name);
  if (fs::exists(target)) {
    return message(400, "Directory already exists at path: " + target.string());
  }
  fs::create_directories(target);
  for (const auto& entry : fs::directory_iterator(source->dir)) {
    if (entry.is_regular_file()) {
      copy_sparse(entry.path(), target / entry.path().filename());
    } else {
      fs::copy(entry.path(), target / entry.path().filename(), fs::copy_options::recursive);
    }
  }
  fs::remove(target / "sessions.json");
  json config = read_json(target / "config.json").value_or(json::object());
  config["macAddress"] = random_mac();
  if (config.contains("machineIdentifier")) {
    config["machineIdentifier"] = random_base64(24);
  }
  write_json(target / "config.json", config, true);
  return json_reply(
      200,
      {{"message", "VM cloned successfully"}, {"source", raw_name}, {"destination", new_name}});
}

Reply Simulator::patch_vm(const Params& p,
                          const std::map<std::string, std::string>&,
                          const std::string& text) {
  Body b(text);
  const auto cpu = b.optional_int("cpu");
  const auto memory = b.optional_string("memory");
  const auto disk = b.optional_string("diskSize");
  const auto display = b.optional_string("display");
  const auto storage = b.optional_string("storage");
  const bool no_backup = b.optional_bool("noBackup").value_or(false);
  const bool keep_backup = b.optional_bool("keepBackup").value_or(false);
  const bool dry_run = b.optional_bool("dryRun").value_or(false);
  std::string error;
  auto vm = find_vm(p[0], storage, error);
  if (!vm) {
    return message(400, error);
  }
  const std::string name = vm->dir.filename().string();
  if ((display && !valid_display(*display)) || ((no_backup || keep_backup || dry_run) && !disk) ||
      (no_backup && keep_backup)) {
    return message(400, k_validation_error);
  }
  const bool running = is_running(vm->dir);
  json config = read_json(vm->dir / "config.json").value_or(json::object());
  // Applied one by one and saved each time: not atomic, as in Lume (§3.7).
  if (cpu) {
    if (running) {
      return message(400, "Virtual machine already running: " + name);
    }
    config["cpuCount"] = *cpu;
    write_json(vm->dir / "config.json", config, true);
  }
  if (memory) {
    auto bytes = parse_size(*memory);
    if (!bytes) {
      return message(400, k_validation_error);
    }
    if (running) {
      return message(400, "Virtual machine already running: " + name);
    }
    config["memorySize"] = *bytes;
    write_json(vm->dir / "config.json", config, true);
  }
  if (disk) {
    auto bytes = parse_size(*disk);
    if (!bytes) {
      return message(400, k_validation_error);
    }
    if (running) {
      return message(400, "Cannot modify " + name + ": the VM is running. Stop it first.");
    }
    const std::uint64_t current =
        fs::exists(vm->dir / "disk.img") ? fs::file_size(vm->dir / "disk.img") : 0;
    if (*bytes < current) {
      return message(400, "New disk size must be larger than the current size");
    }
    if (!dry_run) {
      fs::resize_file(vm->dir / "disk.img", *bytes);
      config["diskSize"] = *bytes;
      write_json(vm->dir / "config.json", config, true);
    }
  }
  if (display) {
    if (running) {
      return message(400, "Virtual machine already running: " + name);
    }
    config["display"] = *display;
    write_json(vm->dir / "config.json", config, true);
  }
  return message(200, "VM settings updated successfully");
}

Reply Simulator::run_vm(const Params& p,
                        const std::map<std::string, std::string>&,
                        const std::string& text) {
  bool no_display = false;
  std::optional<std::string> storage;
  std::string vnc = "enabled";
  std::vector<SharedDirectory> shared_directories;
  if (!text.empty()) {
    try {
      Body b(text);
      no_display = b.optional_bool("noDisplay").value_or(false);
      b.optional_bool("recoveryMode");
      b.optional_bool("clipboard");
      storage = b.optional_string("storage");
      b.optional_string("diskPath");
      b.optional_string("nvramPath");
      vnc = b.optional_string("vnc").value_or("enabled");
      if (auto network = b.optional_string("network"); network && !normalized_network(*network)) {
        return message(400, k_validation_error);
      }
      if (const json* shared = b.get("sharedDirectories")) {
        if (!shared->is_array()) {
          throw DecodeFailure{};
        }
        // RunVMRequest.parse() (Requests.swift @ b296ec9c): hostPath required, readOnly an
        // optional Bool defaulting to false; each host path must exist and be a directory
        // (FileManager.fileExists(isDirectory:), which follows links), all before the 202.
        for (const json& d : *shared) {
          if (!d.is_object() || !d.contains("hostPath") || !d["hostPath"].is_string() ||
              (d.contains("readOnly") && !d["readOnly"].is_boolean() && !d["readOnly"].is_null())) {
            throw DecodeFailure{};
          }
          if (!fs::is_directory(d["hostPath"].get<std::string>())) {
            return message(400, k_validation_error);
          }
          shared_directories.push_back(
              {d["hostPath"].get<std::string>(),
               d.contains("readOnly") && d["readOnly"].is_boolean() && d["readOnly"].get<bool>()});
        }
      }
    } catch (const DecodeFailure&) {
      // The run body is decoded with a throwing decoder whose error is a ValidationError (§3.8).
      return message(400, k_validation_error);
    }
  }
  if (vnc != "enabled" && vnc != "disabled") {
    return message(400, k_validation_error);
  }
  if (vnc == "disabled" && !no_display) {
    return message(400, "VNC is disabled for this run, so '--display vnc' cannot be used.");
  }
  // Existence and state are checked only after answering; failures are only logged (§3.8).
  start_vm(p[0], storage, vnc == "enabled", shared_directories);
  return json_reply(202,
                    {{"message", "VM start initiated"}, {"name", p[0]}, {"status", "pending"}});
}

void Simulator::start_vm(const std::string& name,
                         const std::optional<std::string>& storage,
                         bool vnc_enabled,
                         const std::vector<SharedDirectory>& shared) {
  std::string error;
  auto vm = find_vm(name, storage, error);
  if (!vm) {
    log("run '" + name + "' failed in the background: " + error);
    return;
  }
  const std::string vm_name = vm->dir.filename().string();
  if (status_of(vm->dir).rfind("provisioning", 0) == 0) {
    log("run '" + name + "' failed: Virtual machine is still being provisioned: " + vm_name);
    return;
  }
  if (is_running(vm->dir)) {
    log("run '" + name + "' failed: Virtual machine already running: " + vm_name);
    return;
  }
  if (running_count() >= 2) {
    log("run '" + name + "' failed: the host already runs 2 VMs");
    return;
  }
  RunningVm run;
  run.booted_at =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(m_options.boot_delay_ms);
  json session;
  if (vnc_enabled) {
    run.vnc_url = "vnc://:" + vnc_password() + "@127.0.0.1:" + std::to_string(m_next_vnc_port++);
    session = {{"url", *run.vnc_url}};
  } else {
    session = {
        {"vncEnabled", false}, {"pid", static_cast<int>(getpid())}, {"startedAt", unix_now()}};
  }
  // VM.saveSessionData / saveNoVNCSessionData (VM.swift @ b296ec9c): the request's shares,
  // each with the automount tag Requests.swift gave it, only when there are any.
  run.shared = shared;
  if (!shared.empty()) {
    json dirs = json::array();
    for (const auto& d : shared) {
      dirs.push_back({{"hostPath", d.host_path},
                      {"tag", "com.apple.virtio-fs.automount"},
                      {"readOnly", d.read_only}});
    }
    session["sharedDirectories"] = dirs;
  }
  write_json(vm->dir / "sessions.json", session, false);
  if (!m_options.guest_share_root.empty() && !shared.empty()) {
    const std::string problem =
        GuestShareView::expose(m_options.guest_share_root, shared, run.view);
    if (!problem.empty()) {
      log("run '" + vm_name + "': guest share view: " + problem);
    } else if (!run.view.enforced) {
      log("run '" + vm_name + "': read-only shares exposed as links (no permission to mount)");
    }
  }
  m_running[fs::weakly_canonical(vm->dir).string()] = run;
  log("run '" + vm_name + "': running");
}

void Simulator::withdraw_shares(RunningVm& run) {
  if (!m_options.guest_share_root.empty() && !run.shared.empty()) {
    GuestShareView::withdraw(m_options.guest_share_root, run.view);
  }
}

void Simulator::withdraw_all_shares() {
  for (auto& [dir, run] : m_running) {
    withdraw_shares(run);
  }
}

Reply Simulator::stop_vm(const Params& p,
                         const std::map<std::string, std::string>&,
                         const std::string& text) {
  std::optional<std::string> storage;
  // Malformed JSON or a non-string storage is silently ignored (§3.9).
  json j = json::parse(text, nullptr, false);
  if (j.is_object() && j.contains("storage") && j["storage"].is_string()) {
    storage = j["storage"].get<std::string>();
  }
  std::string error;
  auto vm = find_vm(p[0], storage, error);
  if (!vm) {
    return message(400, error);
  }
  const std::string name = vm->dir.filename().string();
  if (status_of(vm->dir).rfind("provisioning", 0) == 0) {
    return message(400, "Virtual machine is still being provisioned: " + name);
  }
  if (!is_running(vm->dir)) {
    return message(400, "Virtual machine not running: " + name);
  }
  if (auto running = m_running.find(fs::weakly_canonical(vm->dir).string());
      running != m_running.end()) {
    withdraw_shares(running->second);
  }
  m_running.erase(fs::weakly_canonical(vm->dir).string());
  fs::remove(vm->dir / "sessions.json");
  log("stop '" + name + "'");
  Reply r = message(200, "VM stopped successfully");
  r.delay_before_send = std::chrono::milliseconds(m_options.stop_delay_ms);
  return r;
}

Reply Simulator::setup_vm(const Params& p,
                          const std::map<std::string, std::string>&,
                          const std::string& text) {
  if (text.empty()) {
    return message(400, "Request body is required");
  }
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) {
    return message(400,
                   "The data couldn\u2019t be read because it isn\u2019t in the correct format.");
  }
  auto text_of = [&](const char* key) -> std::optional<std::string> {
    return j.contains(key) && j[key].is_string()
               ? std::optional<std::string>(j[key].get<std::string>())
               : std::nullopt;
  };
  auto path = text_of("configPath");
  auto yaml = text_of("configYaml");
  if (!path && !yaml) {
    return message(400, "Either configPath or configYaml is required");
  }
  if (path && *path != "tahoe" && *path != "sequoia" && !fs::is_regular_file(*path)) {
    return message(400, "Unattended config not found: " + *path);
  }
  log("setup '" + p[0] + "' accepted (lume-sim does not boot the VM for setup)");
  return json_reply(202, {{"message", "Setup started"}, {"name", p[0]}});
}

Reply Simulator::get_ipsw(const Params&,
                          const std::map<std::string, std::string>&,
                          const std::string&) {
  return json_reply(200,
                    {{"url", "https://updates.cdn-apple.com/lume-sim/UniversalMac_Restore.ipsw"}});
}

// --- pulls and pushes -----------------------------------------------------------------------

void Simulator::fail_pull(const std::string& key, const std::string& why) {
  m_pulls[key] = PullRecord{false, 0, why};
  log("pull '" + key + "' failed: " + why);
}

namespace {

struct PullBody {
  std::string image;
  std::optional<std::string> name;
  std::optional<std::string> registry;
  std::optional<std::string> organization;
  std::optional<std::string> storage;
  std::string key;
};

PullBody read_pull(const std::string& text) {
  Body b(text);
  PullBody p;
  p.image = b.string("image");
  p.name = b.optional_string("name");
  p.registry = b.optional_string("registry");
  p.organization = b.optional_string("organization");
  p.storage = b.optional_string("storage");
  p.key = p.name.value_or(p.image.substr(0, p.image.find(':')));
  return p;
}

// Lume's PullError text when the manifest cannot be fetched (also what lume-sim answers for a
// registry it cannot reach: anything but loopback).
const char* const k_manifest_failure = "Failed to fetch image manifest from registry.";

std::string random_suffix() {
  std::uniform_int_distribution<std::uint64_t> any;
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(any(rng())));
  return buffer;
}

/// Moves a finished directory into place; across file systems it is copied (sparse) instead.
void move_directory(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (!ec) {
    return;
  }
  fs::create_directories(to);
  for (const auto& entry : fs::directory_iterator(from)) {
    copy_sparse(entry.path(), to / entry.path().filename());
  }
  fs::remove_all(from);
}

} // namespace

std::string Simulator::run_pull(const std::string& key,
                                const std::string& image,
                                const std::optional<std::string>& name,
                                const std::optional<std::string>& registry,
                                const std::optional<std::string>& organization,
                                const std::optional<std::string>& storage) {
  auto set_progress = [this, key](double value) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_pulls[key].progress = std::floor(value);
  };
  std::string why;
  const std::chrono::milliseconds delay(m_options.pull_delay_ms);
  try {
    // Exactly "name:tag" (one colon); a digest reference "repo@sha256:hex" passes this check
    // with name "repo@sha256" and tag "<hex>" and fails at the registry, as in Lume (§1.2).
    if (std::count(image.begin(), image.end(), ':') != 1) {
      throw RegistryFailure("Invalid image format");
    }
    const std::string image_name = image.substr(0, image.find(':'));
    const std::string tag = image.substr(image.find(':') + 1);
    const std::string vm_name = name.value_or(image_name + "_" + tag);
    fs::path target;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      std::string error;
      auto location = resolve_storage(storage, error);
      if (!location) {
        throw RegistryFailure(error);
      }
      target = location->dir / vm_name;
      if (fs::exists(target)) {
        throw RegistryFailure("Virtual machine already exists with name: " + vm_name);
      }
    }
    if (!m_options.pull_gate.empty()) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!fs::exists(m_options.pull_gate) && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    std::this_thread::sleep_for(delay / 2);
    auto endpoint =
        registry_endpoint(configured_registry(), registry, organization, m_options.registry_ca);
    if (!endpoint) {
      throw RegistryFailure(k_manifest_failure);
    }
    // The repository is always <organization>/<name> (ImageContainerRegistry.pull).
    const std::string repository = endpoint->organization + "/" + image_name;
    const char* tmp = std::getenv("TMPDIR");
    const fs::path staging =
        fs::path(tmp != nullptr ? tmp : "/tmp") / ("lume_vm_" + random_suffix());
    std::string digest;
    try {
      digest = pull_oci_image(*endpoint, repository, tag, staging, set_progress, delay / 2);
    } catch (...) {
      std::error_code ec;
      fs::remove_all(staging, ec);
      throw;
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    if (fs::exists(target)) {
      fs::remove_all(staging);
      throw RegistryFailure("Virtual machine already exists with name: " + vm_name);
    }
    if (!m_options.guest_home.empty()) {
      restore_guest_home_from(staging, key);
    }
    move_directory(staging, target);
    // Written after the move, the digest exactly as the header said, no newline (§4.3).
    std::ofstream(target / ".manifest-digest", std::ios::binary) << digest;
    m_pulls.erase(key);
    log("pull '" + key + "': " + repository + ":" + tag + " (" + digest + ") into " +
        target.string());
    return "";
  } catch (const std::exception& e) {
    why = e.what();
  }
  std::lock_guard<std::mutex> lock(m_mutex);
  fail_pull(key, why);
  return why;
}

void Simulator::restore_guest_home_from(const fs::path& staging, const std::string& key) {
  // Before the VM is moved into place, so an unsafe archive fails the pull and leaves no VM.
  try {
    if (restore_guest_home(staging / "disk.img", m_options.guest_home)) {
      log("pull '" + key + "': guest home " + m_options.guest_home + " restored from disk.img");
    }
  } catch (const std::exception& e) { // GuestHomeError, or a std::filesystem error
    std::error_code ec;
    fs::remove_all(staging, ec);
    throw RegistryFailure(std::string("lume-sim --guest-home: ") + e.what());
  }
}

Reply Simulator::pull_sync(const Params&,
                           const std::map<std::string, std::string>&,
                           const std::string& text) {
  PullBody p = read_pull(text);
  const auto colons = std::count(p.image.begin(), p.image.end(), ':');
  if (colons != 1) {
    return message(400, colons == 0 ? k_validation_error : "Invalid image format");
  }
  m_pulls[p.key] = PullRecord{true, 0, ""};
  Reply r;
  r.deferred = [this, p] {
    const std::string why = run_pull(p.key, p.image, p.name, p.registry, p.organization, p.storage);
    if (!why.empty()) {
      return message(400, why);
    }
    return json_reply(200,
                      {{"message", "Image pulled successfully"},
                       {"image", p.image},
                       {"name", p.name.value_or("default")}});
  };
  return r;
}

Reply Simulator::pull_start(const Params&,
                            const std::map<std::string, std::string>&,
                            const std::string& text) {
  PullBody p = read_pull(text);
  m_pulls[p.key] = PullRecord{true, 0, ""};
  std::thread([this, p] {
    run_pull(p.key, p.image, p.name, p.registry, p.organization, p.storage);
  }).detach();
  return json_reply(202, {{"message", "Pull started"}, {"name", p.key}, {"image", p.image}});
}

Reply Simulator::push(const Params&,
                      const std::map<std::string, std::string>&,
                      const std::string& text) {
  Body b(text);
  const std::string name = b.string("name");
  const std::string image_name = b.string("imageName");
  const json* tags = b.get("tags");
  if (tags == nullptr || !tags->is_array() ||
      !std::all_of(tags->begin(), tags->end(), [](const json& t) { return t.is_string(); })) {
    throw DecodeFailure{};
  }
  const auto registry = b.optional_string("registry");
  const auto organization = b.optional_string("organization");
  const auto storage = b.optional_string("storage");
  const auto chunk_mb = b.optional_int("chunkSizeMb");
  b.optional_bool("singleLayer");
  const std::vector<std::string> tag_list = tags->get<std::vector<std::string>>();
  std::string error;
  auto vm = find_vm(name, storage, error);
  if (vm && !m_options.guest_home.empty()) {
    // The guest's disk is its home: snapshot it now, before the 202, like a disk that is
    // pushed as it was when the request came in.
    try {
      const std::size_t entries =
          write_guest_home_archive(m_options.guest_home, vm->dir / "disk.img");
      log("push '" + name + "': disk.img is now the guest home " + m_options.guest_home + " (" +
          std::to_string(entries) + " entries)");
    } catch (const std::exception& e) { // GuestHomeError, or a std::filesystem error
      error = std::string("lume-sim --guest-home: ") + e.what();
      vm.reset();
    }
  }
  const std::uint64_t chunk_bytes =
      static_cast<std::uint64_t>(chunk_mb && *chunk_mb > 0 ? *chunk_mb : 512) << 20;
  // Everything after the answer runs in the background; the outcome is only logged (§3.13).
  std::string joined_tags;
  for (const auto& tag : tag_list) {
    joined_tags += (joined_tags.empty() ? "" : ",") + tag;
  }
  const std::string pushed = image_name + ":" + joined_tags;
  std::thread(
      [this, vm, error, registry, organization, image_name, tag_list, chunk_bytes, name, pushed] {
        // Handlers.swift handlePush prints exactly these two lines to stdout.
        try {
          if (!vm) {
            throw RegistryFailure(error);
          }
          // ImageContainerRegistry.push: no credentials in the server's environment is
          // authenticationFailed, after a Logger.error line; PushError is not a LocalizedError, so
          // its description is Foundation's generic text (mac-realities.md).
          const auto credentials = push_credentials_from_environment();
          if (!credentials) {
            lume_logger_error("Missing GitHub credentials. Please set GITHUB_USERNAME and "
                              "GITHUB_TOKEN environment variables");
            throw RegistryFailure(
                "The operation couldn\u2019t be completed. (lume.PushError error 3.)");
          }
          auto endpoint = registry_endpoint(
              configured_registry(), registry, organization, m_options.registry_ca);
          if (!endpoint) {
            throw RegistryFailure("lume-sim reaches only loopback registries");
          }
          push_oci_image(*endpoint,
                         *credentials,
                         endpoint->organization + "/" + image_name,
                         tag_list,
                         vm->dir,
                         chunk_bytes);
          lume_print("Background push completed successfully for image: " + pushed);
        } catch (const std::exception& e) {
          lume_print("Background push failed for image: " + pushed + " - Error: " + e.what());
        }
      })
      .detach();
  return json_reply(202,
                    {{"message", "Push initiated in background"},
                     {"name", name},
                     {"imageName", image_name},
                     {"tags", *tags}});
}

Reply Simulator::prune(const Params&,
                       const std::map<std::string, std::string>&,
                       const std::string&) {
  return message(200, "Successfully removed cached images");
}

Reply Simulator::list_images(const Params&,
                             const std::map<std::string, std::string>&,
                             const std::string&) {
  return json_reply(200, json::array());
}

// --- configuration --------------------------------------------------------------------------

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
