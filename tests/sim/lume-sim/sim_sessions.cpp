// A VM's sessions: run, stop, setup (reference/lume-api.md §3.8-§3.10), and GET /lume/ipsw (§3.16).
#include "guest_home_archive.hpp"
#include "sim_support.hpp"

#include <fstream>

namespace lume_sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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

} // namespace

Reply Simulator::run_vm(const Params& p,
                        const std::map<std::string, std::string>&,
                        const std::string& text) {
  bool no_display = false;
  std::optional<std::string> storage;
  std::optional<std::string> network;
  std::string vnc = "enabled";
  std::vector<SharedDirectory> shared_directories;
  if (!text.empty()) {
    // The whole body is decoded first (JSONDecoder), then validated: shares, network, vnc.
    try {
      Body b(text);
      no_display = b.optional_bool("noDisplay").value_or(false);
      b.optional_bool("recoveryMode");
      b.optional_bool("clipboard");
      storage = b.optional_string("storage");
      b.optional_string("diskPath");
      b.optional_string("nvramPath");
      network = b.optional_string("network");
      if (!m_options.lume_053()) { // 0.5.3's RunVMRequest has no `vnc`: the key is ignored
        vnc = b.optional_string("vnc").value_or("enabled");
      }
      if (const json* shared = b.get("sharedDirectories")) {
        if (!shared->is_array()) {
          throw DecodeFailure{};
        }
        // RunVMRequest.SharedDirectoryRequest (Requests.swift @ b296ec9c): hostPath required,
        // readOnly an optional Bool defaulting to false.
        for (const json& d : *shared) {
          if (!d.is_object() || !d.contains("hostPath") || !d["hostPath"].is_string() ||
              (d.contains("readOnly") && !d["readOnly"].is_boolean() && !d["readOnly"].is_null())) {
            throw DecodeFailure{};
          }
          shared_directories.push_back(
              {d["hostPath"].get<std::string>(),
               d.contains("readOnly") && d["readOnly"].is_boolean() && d["readOnly"].get<bool>()});
        }
      }
    } catch (const DecodeFailure&) {
      if (m_options.lume_053()) {
        // 0.5.3 decodes with `try?` and runs with every default: noDisplay false, no shares.
        start_vm(p[0], std::nullopt, true, {});
        return json_reply(
            202, {{"message", "VM start initiated"}, {"name", p[0]}, {"status", "pending"}});
      }
      // Main throws ValidationError("Invalid run request body") (Handlers.swift @ ab957bdb7);
      // the answer carries its localizedDescription (§1.6).
      return message(400, k_validation_error);
    }
  }
  // RunVMRequest.parse(): each host path must exist and be a directory (FileManager's
  // fileExists(isDirectory:), which follows links), all before the 202.
  for (const SharedDirectory& d : shared_directories) {
    if (!fs::is_directory(d.host_path)) {
      return message(400, k_validation_error);
    }
  }
  if ((network && !normalized_network(*network)) || (vnc != "enabled" && vnc != "disabled")) {
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
  if (m_options.guest_disks && !load_guest_disk(vm->dir, vm_name)) {
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

// --guest-disks, a simulation device (tests/sim/README.md): on a Mac the guest lives on the VM's
// own disk.img, and clone copies every file of the VM directory (trycua/cua @ b296ec9c,
// FileSystem/Home.swift cloneVMDirectory), so keeping the guest home in the VM directory makes a
// clone start as its source's disk was. The one-guest limit below is ours, not Lume's.
bool Simulator::load_guest_disk(const fs::path& dir, const std::string& vm) {
  if (running_count() > 0) {
    log("run '" + vm + "' failed: lume-sim --guest-disks has one guest, and another VM runs");
    return false;
  }
  const fs::path disk = dir / k_guest_disk;
  if (!fs::exists(disk)) {
    return true; // never stopped under --guest-disks: the guest is whatever the home holds
  }
  try {
    restore_guest_home(disk, m_options.guest_home);
    log("run '" + vm + "': guest home restored from " + disk.string());
    return true;
  } catch (const std::exception& e) {
    log("run '" + vm + "' failed: guest disk " + disk.string() + ": " + e.what());
    return false;
  }
}

void Simulator::save_guest_disk(const fs::path& dir, const std::string& vm) {
  try {
    write_guest_home_archive(m_options.guest_home, dir / k_guest_disk);
    log("stop '" + vm + "': guest home saved to " + (dir / k_guest_disk).string());
  } catch (const std::exception& e) {
    log("stop '" + vm + "': guest disk not saved: " + std::string(e.what()));
  }
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
  if (m_options.guest_disks) {
    save_guest_disk(vm->dir, name);
  }
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

} // namespace lume_sim
