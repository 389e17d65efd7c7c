#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lume_sim {

/// One injected fault: the first `remaining` requests (all when unset) whose method and path
/// match get `status` and `body` instead of the real answer.
struct Fault {
  std::string method;
  std::string path; ///< exact path (query excluded); a trailing '*' matches a prefix
  int status = 500;
  std::optional<int> remaining;    ///< from "xN"
  std::optional<std::string> body; ///< from ":BODY"; default {"message":"..."} for >= 400
};

/// A request whose connection is closed without any answer.
struct Drop {
  std::string method;
  std::string path;
  std::optional<int> remaining;
};

struct Options {
  int port = 7777;
  std::string home;
  /// Lume's config.yaml registry block (registry.ghcr.registry / .organization): what Lume
  /// uses when a pull or push names ghcr.io/trycua (RegistryFactory.swift). A URL's scheme is
  /// ignored: Lume always speaks https.
  std::string registry = "ghcr.io";
  std::string registry_organization = "trycua";
  /// PEM CA file trusted for registry TLS, standing in for the Mac's keychain.
  std::string registry_ca;
  /// Stand-in for /tmp when Lume runs as its LaunchAgent: stdout goes to
  /// DIR/lume_daemon.log, stderr to DIR/lume_daemon.error.log, and GET /lume/logs reads them.
  /// Empty: Lume started by hand, no log files.
  std::string log_dir;
  std::string guest_address;
  int guest_ssh_port = 22;
  int boot_delay_ms = 500;
  int create_delay_ms = 500;
  int stop_delay_ms = 200;
  int pull_delay_ms = 200;
  /// Test hook: a started pull waits until this file exists (at most 60 s) before it fetches
  /// the manifest, so a test can move the tag after lume-unlock resolved it.
  std::string pull_gate;
  /// Simulation device, not Lume: the guest's home directory, which stands in for its disk.
  /// A push first archives it into the VM's disk.img; a pull whose disk.img is such an archive
  /// restores it (guest_home_archive.hpp).
  std::string guest_home;
  /// Simulation device, not Lume: with guest_home, every VM keeps its own guest on its "disk"
  /// (DIR/guest-home.tar in the VM directory): a stop saves the home there, a run restores it,
  /// and a clone copies it with the rest of the VM. One guest: one such VM runs at a time.
  bool guest_disks = false;
  /// Simulation device, not Lume: the folder where the guest sees the automounted shares of a
  /// running VM (guest-sim's stand-in for "/Volumes/My Shared Files"; guest_shares.hpp).
  std::string guest_share_root;
  int latency_ms = 0;
  /// Which Lume a run answers as: "main" (trycua/cua b296ec9: a run body that does not decode
  /// is a 400, and `vnc: "disabled"` starts no VNC listener) or "0.5.3", the release (a body
  /// that does not decode runs with every default, and `vnc` is ignored: VNC always listens).
  std::string lume_version = "main";
  bool lume_053() const { return lume_version == "0.5.3"; }
  std::vector<Fault> faults;
  std::vector<Drop> drops;
};

/// Parses 'METHOD PATH=STATUS[xN][:BODY]'; nullopt with `error` set when malformed.
std::optional<Fault> parse_fault(const std::string& spec, std::string& error);
/// Parses 'METHOD PATH[=xN]'.
std::optional<Drop> parse_drop(const std::string& spec, std::string& error);
/// True when `path` matches a fault/drop pattern.
bool path_matches(const std::string& pattern, const std::string& path);

} // namespace lume_sim
