// A recipe artifact from the network into the guest: lume-unlock's fetch (loopback HTTPS, into
// the content-addressed cache, hashed while streaming) plus its install (streamed into guest-sim,
// hashed there as it arrives, moved into place), against `curl` + `sha256` + `scp` of the same
// bytes to the same guest. Each side runs 5 times (--runs) in this one process, alternating, and
// the medians are printed, with the install part against scp alone (the fetch and the install are
// separate pieces of work: each shows its own gain) and the peak RSS of our side (run in a child
// process each time, so the in-process HTTPS server does not count). Run manually:
//   build/tests/bench/artifact_transfer_bench [--mib 256] [--runs 5]
// ctest runs it only as a smoke test, --mib 4 --runs 1. Exit 77 (skipped) without guest-sim's sshd,
// curl or scp, unless CI=true.
#include "apply/artifact_installer.hpp"
#include "apply/artifact_stage.hpp"
#include "guest/ssh_session.hpp"
#include "support/artifact_server.hpp"
#include "support/bench_arguments.hpp"
#include "support/guest_sim.hpp"
#include "support/process.hpp"
#include "support/random_file.hpp"
#include "support/temp_dir.hpp"
#include "support/test_ca.hpp"
#include "util/sha256.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <vector>

namespace {

using namespace lume_unlock;
using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "artifact_transfer_bench: " << what << '\n';
  std::exit(1);
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

/// What both sides need to reach the bytes and the guest.
struct Setup {
  std::string url;
  std::string sha256;
  std::string ca_file;
  guest::SshSessionOptions ssh;
  std::string key_file;
  std::string home;
};

struct OursRun {
  double total = 0;
  double fetch = 0;
  double install = 0;
  long rss_kib = 0;
};

struct PeerRun {
  double total = 0;
  double curl = 0;
  double sha256 = 0;
  double scp = 0;
};

/// Our whole path, as create runs it: fetch into an empty cache, unpack (none), install.
/// Returns the seconds of the fetch and of the install (connecting included).
std::pair<double, double>
run_ours(const Setup& setup, const std::string& work, const std::string& guest_path) {
  fetch::BlobCache cache(work + "/cache");
  util::HttpClientOptions http_options;
  http_options.ca_file = setup.ca_file;
  util::HttpClient http(http_options);
  recipe::Recipe recipe;
  recipe.path = work + "/r.yaml";
  recipe::InstallItem item;
  item.field = "install[0]";
  item.source = fetch::parse_https_source(setup.url).value_or_throw();
  item.sha256 = setup.sha256;
  item.dest = guest_path;
  recipe.install = {item};
  auto staging = apply::StagingArea::create(cache).value_or_throw();
  auto start = Clock::now();
  auto staged = apply::stage_artifacts(recipe, nullptr, cache, {http, nullptr, {}, {}, {}}, staging)
                    .value_or_throw();
  const double fetched = seconds_since(start);
  start = Clock::now();
  auto session = guest::SshSession::connect(setup.ssh).value_or_throw();
  auto installed =
      apply::install_artifacts(*session, staged, apply::InstalledShim{}, guest_path + ".d", {})
          .value_or_throw();
  const double install = seconds_since(start);
  if (installed.files_sent != 1) {
    fail("our install sent " + std::to_string(installed.files_sent) + " files");
  }
  return {fetched, install};
}

/// One run of ours in a child process (its peak RSS is then its own), into a fresh cache and a
/// fresh guest path, both removed afterwards.
OursRun run_ours_in_child(const Setup& setup, const std::string& work, int index) {
  namespace fs = std::filesystem;
  const std::string dir = work + "/ours-" + std::to_string(index);
  const std::string guest_dir = setup.home + "/ours-" + std::to_string(index);
  fs::create_directories(dir);
  int times[2];
  if (::pipe(times) != 0) {
    fail("pipe: " + std::string(std::strerror(errno)));
  }
  ::sync();
  const auto start = Clock::now();
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(times[0]);
    try {
      const auto [fetched, installed] = run_ours(setup, dir, guest_dir + "/model.gguf");
      char line[64];
      const int length = std::snprintf(line, sizeof line, "%.6f %.6f\n", fetched, installed);
      (void)!::write(times[1], line, static_cast<std::size_t>(length));
    } catch (const Error& e) {
      std::cerr << "artifact_transfer_bench: ours: " << e.message() << '\n';
      std::_Exit(1);
    }
    std::_Exit(0);
  }
  ::close(times[1]);
  int status = 0;
  rusage usage{};
  ::wait4(child, &status, 0, &usage);
  OursRun run;
  run.total = seconds_since(start);
  run.rss_kib = usage.ru_maxrss;
  char line[64] = {};
  const ssize_t got = ::read(times[0], line, sizeof line - 1);
  ::close(times[0]);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got <= 0 ||
      std::sscanf(line, "%lf %lf", &run.fetch, &run.install) != 2) {
    fail("our fetch and install failed");
  }
  if (util::sha256_file_hex(guest_dir + "/model.gguf").value_or_throw() != setup.sha256) {
    fail("our copy in the guest has other bytes");
  }
  fs::remove_all(dir);
  fs::remove_all(guest_dir);
  return run;
}

/// The peer: curl into a file, hashed afterwards (as a careful user would), then scp.
PeerRun run_peer(const Setup& setup, const std::string& work, int port, const std::string& user) {
  const std::string local = work + "/peer.gguf";
  const std::string remote = setup.home + "/peer.gguf";
  PeerRun run;
  ::sync();
  const auto start = Clock::now();
  auto curl = test::run_command(
      {"/usr/bin/curl", "-fsS", "--cacert", setup.ca_file, "-o", local, setup.url});
  if (curl.exit_status != 0) {
    fail("curl: " + curl.stderr_text);
  }
  run.curl = seconds_since(start);
  const auto hash_start = Clock::now();
  if (util::sha256_file_hex(local).value_or_throw() != setup.sha256) {
    fail("curl's copy has other bytes");
  }
  run.sha256 = seconds_since(hash_start);
  const auto scp_start = Clock::now();
  auto scp = test::run_command({"/usr/bin/scp",
                                "-q",
                                "-P",
                                std::to_string(port),
                                "-i",
                                setup.key_file,
                                "-o",
                                "StrictHostKeyChecking=no",
                                "-o",
                                "UserKnownHostsFile=/dev/null",
                                "-o",
                                "BatchMode=yes",
                                local,
                                user + "@127.0.0.1:" + remote});
  run.scp = seconds_since(scp_start);
  run.total = seconds_since(start);
  if (scp.exit_status != 0) {
    fail("scp: " + scp.stderr_text);
  }
  std::filesystem::remove(local);
  std::filesystem::remove(remote);
  return run;
}

} // namespace

int main(int argc, char** argv) {
  const test::BenchArguments arguments =
      test::parse_bench_arguments(argc, argv, "artifact_transfer_bench", {});
  const std::uint64_t mib = arguments.mib;
  const int runs = arguments.runs;
  const bool ci = test::running_in_ci();
  const auto skip = [&](const std::string& why) {
    std::cerr << "artifact_transfer_bench: skipped: " << why << '\n';
    return ci ? 1 : 77;
  };
  for (const char* tool : {"/usr/bin/curl", "/usr/bin/scp", "/usr/bin/ssh-keygen"}) {
    if (access(tool, X_OK) != 0) {
      return skip(std::string(tool) + " is not installed");
    }
  }
  test::TempDir work("lume-unlock-artifact-bench");
  std::string why;
  auto ca = test::TestCa::create(why);
  if (!ca) {
    return skip(why);
  }
  auto server = test::ArtifactServer::start(*ca, why);
  if (!server) {
    return skip(why);
  }
  // The guest, reached by key by both sides: ours as a per-VM key, scp with -i.
  const std::string state = work / "state";
  test::run_command({"/bin/mkdir", "-p", state + "/vms/vm1"});
  test::run_command({"/usr/bin/ssh-keygen",
                     "-q",
                     "-t",
                     "ed25519",
                     "-N",
                     "",
                     "-f",
                     state + "/vms/vm1/ssh_ed25519"});
  test::TempDir guest_dir("lume-unlock-artifact-bench-guest");
  test::GuestSim guest(guest_dir.path());
  if (auto problem = guest.start({"--authorized-key", state + "/vms/vm1/ssh_ed25519.pub"})) {
    return skip(*problem);
  }
  Setup setup;
  setup.ssh.vm = "vm1";
  setup.ssh.host = "127.0.0.1";
  setup.ssh.port = guest.info().port;
  setup.ssh.user = guest.info().user;
  setup.ssh.state_dir = state;
  setup.ssh.password = guest.info().password.value_or("");
  setup.ssh.password_from_environment = true;
  setup.ssh.connect_timeout = std::chrono::seconds(5);
  setup.key_file = state + "/vms/vm1/ssh_ed25519";
  setup.home = guest.info().home;
  setup.ca_file = ca->ca_file();
  setup.sha256 = test::write_random_file(work / "model.gguf", mib, 7);
  server->serve_file("/model.gguf", work / "model.gguf");
  setup.url = server->url("/model.gguf");
  // A session first, so the host key is pinned before either side is timed.
  guest::SshSession::connect(setup.ssh).value_or_throw();

  std::vector<double> ours, fetches, installs, peers, curls, hashes, scps, ratios, install_ratios;
  long rss_kib = 0;
  const double mibf = static_cast<double>(mib);
  std::cout << std::fixed << std::setprecision(3) << "artifact of " << mib
            << " MiB, loopback HTTPS -> host -> guest-sim over SSH, " << runs
            << " runs of each side, alternating\n";
  for (int i = 0; i < runs; ++i) {
    const OursRun our = run_ours_in_child(setup, work.path(), i);
    const PeerRun peer = run_peer(setup, work.path(), guest.info().port, guest.info().user);
    std::cout << "  run " << i + 1 << ": ours " << our.total << " s (fetch " << our.fetch
              << ", install " << our.install << "; RSS " << our.rss_kib / 1024 << " MiB) | peer "
              << peer.total << " s (curl " << peer.curl << ", sha256 " << peer.sha256 << ", scp "
              << peer.scp << ")" << std::endl;
    ours.push_back(our.total);
    fetches.push_back(our.fetch);
    installs.push_back(our.install);
    rss_kib = std::max(rss_kib, our.rss_kib);
    peers.push_back(peer.total);
    curls.push_back(peer.curl);
    hashes.push_back(peer.sha256);
    scps.push_back(peer.scp);
    ratios.push_back(our.total / peer.total);
    install_ratios.push_back(our.install / peer.scp);
  }
  std::cout << "medians:\n"
            << "  lume-unlock fetch + install: " << median(ours) << " s (" << mibf / median(ours)
            << " MiB/s; fetch " << median(fetches) << " s, install " << median(installs)
            << " s), peak RSS " << rss_kib / 1024 << " MiB\n"
            << "  curl + sha256 + scp:         " << median(peers) << " s (" << mibf / median(peers)
            << " MiB/s; curl " << median(curls) << " s, sha256 " << median(hashes) << " s, scp "
            << median(scps) << " s)\n"
            << "  install ours/scp: " << median(install_ratios) << "\n"
            << "  ratio ours/peer: " << median(ratios) << "\n";
  return 0;
}
