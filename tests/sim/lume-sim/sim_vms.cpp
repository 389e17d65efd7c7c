// The VM endpoints: list, get, create, delete, clone, PATCH (reference/lume-api.md §3.2-§3.7).
#include "sim_support.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <regex>

namespace lume_sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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

std::optional<std::string> query_value(const std::map<std::string, std::string>& q,
                                       const char* key) {
  auto it = q.find(key);
  return it == q.end() ? std::nullopt : std::optional<std::string>(it->second);
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
  config["macAddress"] = random_mac_address();
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
  config["macAddress"] = random_mac_address();
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

} // namespace lume_sim
