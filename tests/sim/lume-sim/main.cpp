// lume-sim: a stand-in for `lume serve` (Lume's main branch, or 0.5.3 with --lume-version) for
// tests and demos without a Mac
// (DESIGN §10). Prints one JSON line {"port":N,"pid":N} on stdout once it listens.
#include "options.hpp"
#include "sim.hpp"

#include <CLI/CLI.hpp>
#include <httplib.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

namespace {

using namespace lume_sim;

/// Closes the client side of the connection from `peer_port` without answering. cpp-httplib
/// does not hand the socket to handlers, so find it among our descriptors by its peer address
/// and shut it down; httplib's later write fails and it closes the descriptor itself.
bool drop_connection(int peer_port) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) {
    return false;
  }
  bool dropped = false;
  while (dirent* entry = readdir(dir)) {
    const int fd = std::atoi(entry->d_name);
    struct stat st {};
    if (fd <= 2 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
      continue;
    }
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0 &&
        peer.sin_family == AF_INET && ntohs(peer.sin_port) == peer_port) {
      shutdown(fd, SHUT_RDWR);
      dropped = true;
    }
  }
  closedir(dir);
  return dropped;
}

template <class Rule>
bool take(std::vector<Rule>& rules, const std::string& method, const std::string& path, Rule& out) {
  for (auto& rule : rules) {
    if (rule.method == method && path_matches(rule.path, path) &&
        (!rule.remaining || *rule.remaining > 0)) {
      if (rule.remaining) {
        --*rule.remaining;
      }
      out = rule;
      return true;
    }
  }
  return false;
}

const char* const k_footer = R"(
Faults (repeatable), matched on METHOD and the path without its query ('*' at the end of PATH
matches a prefix); xN limits a rule to the first N matching requests:
  --fault 'GET /lume/vms/dev=500'            500 {"message":"lume-sim injected fault"}
  --fault 'GET /lume/vms/dev=503x2'          the first two GETs only
  --fault 'GET /lume/vms/dev=200:{"name":'   200 with this raw body (malformed JSON)
  --fault 'GET /lume/vms=200x1:[{"name":1}]' raw body with wrong JSON types, once
  --drop  'POST /lume/vms/dev/run=x1'        close the connection without any answer, once
Registries as in Lume 0.5.3: always https (no plain-HTTP mode), TLS verified against
--registry-ca; the token from the hard-coded https://REGISTRY/token realm (anonymous on a
non-200); the request's registry/organization unless both are the defaults ghcr.io/trycua, which
config.yaml's registry (--registry, --registry-organization) replaces; a push needs
GITHUB_USERNAME/GITHUB_TOKEN (or GHCR_*) in lume-sim's environment and reports its outcome only
as "Background push completed successfully for image: NAME:TAGS" or "Background push failed
for image: NAME:TAGS - Error: TEXT" on stdout (and in --log-dir's lume_daemon.log).
Differences from Lume 0.5.3: stop sleeps --stop-delay-ms (Lume: a fixed 5 s); pulls and pushes
reach only loopback registries (anything else fails with "Failed to fetch image manifest from
registry."); only the OCI image format is pulled (legacy LZ4 images fail); blob retries do not
back off; a push whose /token request fails goes on anonymously (Lume aborts; docker-registry
has no token realm); pull failures other than the manifest fetch use lume-sim's own wording; unattended creates end
`stopped` without the boot phases; the guest IP is --guest-address once --boot-delay-ms has
passed after run, and sshAvailable probes --guest-ssh-port; cpp-httplib adds Keep-Alive headers
and answers a bodiless 400 to unknown methods and to POST/PATCH without Content-Length.
--guest-home DIR is a simulation device, not Lume behaviour (Lume never looks inside disk.img):
the guest's home stands in for its disk. A push first replaces the VM's disk.img with a
deterministic pax tar of DIR (directories, files, symlinks; permission bits kept; marked by a
"LUMESIM.guest-home=1" global header); a pull whose disk.img is such an archive replaces DIR's
contents (DIR itself stays) after checking every path and link stays inside DIR, and fails
otherwise; a pull of any other disk (e.g. from lume-image-seed) leaves DIR alone.
--guest-share-root DIR is a simulation device too: while a VM runs with sharedDirectories, DIR
holds what a macOS guest sees in /Volumes/My Shared Files, under Lume's entry names (the host
path's last component; a duplicate gets a number in parentheses; a hidden empty .lume-live-share
comes first); a readOnly share is a read-only bind mount when lume-sim runs as root (EROFS on
write, like VirtioFS), otherwise a symbolic link. Stop, delete and lume-sim's exit empty DIR.
Lume reports sharedDirectories null in VM details; they are recorded in the VM's sessions.json,
as Lume writes them.
Runs as on Lume's main branch (trycua/cua ab957bdb7): `"vnc":"disabled"` (with "noDisplay":true,
else 400) starts no VNC listener: vncUrl stays null and sessions.json has no url; a run body that
does not decode (not JSON, wrong types, a vnc other than enabled/disabled) is 400 with the
ValidationError's text. --lume-version 0.5.3 answers as the release: `vnc` is ignored (VNC always
listens, vncUrl set) and a body that does not decode starts the VM with every default (202).
Pull timing: --pull-delay-ms is spent half before the manifest fetch (progress 0) and half
spread over the blobs (downloadProgress rises with the bytes); --pull-gate FILE holds every
pull before its manifest fetch until FILE exists (tests move a tag meanwhile).
)";

void add_options(CLI::App& app, Options& options) {
  app.add_option("--port", options.port, "TCP port on 127.0.0.1; 0 picks a free one")
      ->capture_default_str();
  app.add_option("--home", options.home, "directory holding the VM directories (location 'home')")
      ->required();
  app.add_option(
      "--registry",
      options.registry,
      "config.yaml's registry.ghcr.registry: used when a pull or push names ghcr.io/trycua "
      "(HOST[:PORT]; a URL's scheme is ignored, Lume speaks https only)");
  app.add_option("--registry-organization",
                 options.registry_organization,
                 "config.yaml's registry.ghcr.organization (default trycua)");
  app.add_option("--registry-ca",
                 options.registry_ca,
                 "PEM CA file trusted for registry TLS (stands in for the Mac's keychain)")
      ->check(CLI::ExistingFile);
  app.add_option("--log-dir",
                 options.log_dir,
                 "run as if a LaunchAgent: Lume's stdout in DIR/lume_daemon.log, served by GET "
                 "/lume/logs (default: no log files, as when started by hand)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--guest-address",
                 options.guest_address,
                 "ipAddress reported for running VMs (e.g. 127.0.0.1)");
  app.add_option("--guest-ssh-port", options.guest_ssh_port, "port probed for sshAvailable")
      ->capture_default_str();
  app.add_option(
         "--boot-delay-ms", options.boot_delay_ms, "time from run until ipAddress is reported")
      ->capture_default_str();
  app.add_option("--create-delay-ms", options.create_delay_ms, "time a create stays provisioning")
      ->capture_default_str();
  app.add_option("--stop-delay-ms", options.stop_delay_ms, "pause before stop answers (Lume: 5000)")
      ->capture_default_str();
  app.add_option("--pull-delay-ms",
                 options.pull_delay_ms,
                 "time an async pull reports progress before it ends")
      ->capture_default_str();
  app.add_option("--pull-gate",
                 options.pull_gate,
                 "test hook: pulls wait for this file to exist before fetching the manifest");
  app.add_option("--guest-home",
                 options.guest_home,
                 "simulation device: the guest's home, carried in disk.img by pushes and pulls");
  app.add_flag("--guest-disks",
               options.guest_disks,
               "simulation device (with --guest-home): each VM keeps its own guest home in its "
               "directory's guest-home.tar; stop saves it, run restores it, clone copies it; one "
               "such VM runs at a time");
  app.add_option("--guest-share-root",
                 options.guest_share_root,
                 "simulation device: where the guest sees a running VM's shared directories "
                 "(guest-sim's stand-in for /Volumes/My Shared Files)");
  app.add_option("--latency-ms", options.latency_ms, "delay before every answer")
      ->capture_default_str();
  app.add_option("--lume-version",
                 options.lume_version,
                 "the Lume a run answers as: main (vnc \"disabled\" honoured, a run body that "
                 "does not decode is 400) or 0.5.3 (both ignored; see below)")
      ->check(CLI::IsMember({"main", "0.5.3"}))
      ->capture_default_str();
}

/// Reads the command line into `options`: nullopt to go on, else the exit code.
std::optional<int> parse_command_line(int argc, char** argv, Options& options) {
  std::vector<std::string> fault_specs;
  std::vector<std::string> drop_specs;
  CLI::App app{"lume-sim: Lume's HTTP API (lume serve; its main branch, 0.5.3 plus the run "
               "request's vnc policy) over VM directories, for tests"};
  add_options(app, options);
  app.add_option("--fault", fault_specs, "'METHOD PATH=STATUS[xN][:BODY]' (see below)");
  app.add_option("--drop", drop_specs, "'METHOD PATH[=xN]': close without answering");
  app.footer(k_footer);
  CLI11_PARSE(app, argc, argv);
  if (options.guest_disks && options.guest_home.empty()) {
    std::cerr
        << "lume-sim: --guest-disks needs --guest-home DIR (the guest it saves and restores)\n";
    return 2;
  }
  for (const auto& spec : fault_specs) {
    std::string error;
    auto fault = parse_fault(spec, error);
    if (!fault) {
      std::cerr << "lume-sim: --fault: " << error << "\n";
      return 2;
    }
    options.faults.push_back(*fault);
  }
  for (const auto& spec : drop_specs) {
    std::string error;
    auto drop = parse_drop(spec, error);
    if (!drop) {
      std::cerr << "lume-sim: --drop: " << error << "\n";
      return 2;
    }
    options.drops.push_back(*drop);
  }
  return std::nullopt;
}

/// Answers one request: a --drop rule closes the connection without an answer, a --fault rule
/// answers instead of the simulator, anything else goes to the simulator.
void serve(Simulator& sim,
           Options& options,
           std::mutex& rules_mutex,
           const httplib::Request& req,
           httplib::Response& res) {
  if (options.latency_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options.latency_ms));
  }
  const std::string path = req.target.substr(0, req.target.find('?'));
  const std::string request_line = req.method + " " + req.target;
  Drop drop;
  Fault fault;
  bool dropping = false;
  bool faulting = false;
  {
    std::lock_guard<std::mutex> lock(rules_mutex);
    dropping = take(options.drops, req.method, path, drop);
    faulting = !dropping && take(options.faults, req.method, path, fault);
  }
  if (dropping) {
    std::cerr << "lume-sim: " << request_line << " -> dropped (peer port " << req.remote_port << ")"
              << std::endl;
    drop_connection(req.remote_port);
    return;
  }
  Reply reply;
  if (faulting) {
    reply.status = fault.status;
    reply.body =
        fault.body.value_or(fault.status >= 400 ? R"({"message":"lume-sim injected fault"})" : "");
    if (fault.status == 404 && !fault.body) {
      reply.content_type = "text/plain";
      reply.body = "Not found";
    }
  } else {
    std::lock_guard<std::mutex> lock(sim.state_mutex());
    reply = sim.handle(req.method, req.target, req.body);
  }
  if (reply.deferred) {
    reply = reply.deferred();
  }
  if (reply.delay_before_send.count() > 0) {
    std::this_thread::sleep_for(reply.delay_before_send);
  }
  res.status = reply.status;
  res.set_content(reply.body, reply.content_type.c_str());
  std::cerr << "lume-sim: " << request_line << " -> " << reply.status
            << (faulting ? " (injected)" : "") << " (peer port " << req.remote_port << ")"
            << std::endl;
}

} // namespace

int main(int argc, char** argv) {
  Options options;
  if (auto exit_code = parse_command_line(argc, argv, options)) {
    return *exit_code;
  }

  // Signals go to one thread that stops everything; block them before any thread starts.
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Simulator sim(options);
  std::mutex rules_mutex;
  httplib::Server server;
  // Lume never closes a connection (§1.2).
  server.set_keep_alive_max_count(1000000);
  server.set_keep_alive_timeout(60);
  server.set_tcp_nodelay(true);
  // One catch-all handler per method (cpp-httplib reads the body only for routed handlers);
  // the simulator does its own routing on the raw target.
  const auto answer = [&](const httplib::Request& req, httplib::Response& res) {
    serve(sim, options, rules_mutex, req, res);
  };
  server.Get(".*", answer);
  server.Post(".*", answer);
  server.Put(".*", answer);
  server.Patch(".*", answer);
  server.Delete(".*", answer);
  server.Options(".*", answer);

  int port = options.port;
  if (port == 0) {
    port = server.bind_to_any_port("127.0.0.1");
  } else if (!server.bind_to_port("127.0.0.1", port)) {
    port = -1;
  }
  if (port <= 0) {
    std::cerr << "lume-sim: Port " << options.port << " is already in use by another process\n";
    return 1;
  }
  std::cout << "{\"port\":" << port << ",\"pid\":" << getpid() << "}" << std::endl;

  std::thread signal_thread([&] {
    int received = 0;
    sigwait(&signals, &received);
    // Hold the state lock so no handler is half-way through writing a VM directory.
    std::lock_guard<std::mutex> lock(sim.state_mutex());
    std::cerr << "lume-sim: stopping (signal " << received << ")" << std::endl;
    sim.withdraw_all_shares(); // no bind mount outlives the process that made it
    std::_Exit(0);
  });
  signal_thread.detach();
  server.listen_after_bind();
  return 0;
}
