// A recipe artifact from the network into the guest: lume-unlock's fetch (loopback HTTPS, into
// the content-addressed cache, hashed while streaming) plus its install (SFTP into guest-sim,
// checked by SHA-256 in the guest, moved into place), against `curl` + `scp` of the same bytes
// to the same guest, in the same run. Prints both times and the peak RSS of our side (run in a
// child process, so the in-process HTTPS server does not count). Run manually:
//   build/tests/bench/artifact_transfer_bench [--mib 256]
// ctest runs it only as a smoke test with --mib 4. Exit 77 (skipped) without guest-sim's sshd,
// curl or scp, unless CI=true.
#include "apply/artifact_installer.hpp"
#include "apply/artifact_stage.hpp"
#include "guest/ssh_session.hpp"
#include "support/artifact_server.hpp"
#include "support/guest_sim.hpp"
#include "support/process.hpp"
#include "support/random_file.hpp"
#include "support/temp_dir.hpp"
#include "support/test_ca.hpp"
#include "util/sha256.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>

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

/// Our whole path, as create runs it: fetch into an empty cache, unpack (none), install.
void run_ours(const std::string& url,
              const std::string& sha256,
              const std::string& ca_file,
              const std::string& work,
              const guest::SshSessionOptions& ssh,
              const std::string& guest_path) {
  fetch::BlobCache cache(work + "/cache");
  util::HttpClientOptions http_options;
  http_options.ca_file = ca_file;
  util::HttpClient http(http_options);
  recipe::Recipe recipe;
  recipe.path = work + "/r.yaml";
  recipe::InstallItem item;
  item.field = "install[0]";
  item.source = fetch::parse_https_source(url).value_or_throw();
  item.sha256 = sha256;
  item.dest = guest_path;
  recipe.install = {item};
  auto staging = apply::StagingArea::create(cache).value_or_throw();
  auto start = Clock::now();
  auto staged = apply::stage_artifacts(recipe, nullptr, cache, {http, nullptr, {}, {}, {}}, staging)
                    .value_or_throw();
  const double fetched = seconds_since(start);
  auto session = guest::SshSession::connect(ssh).value_or_throw();
  start = Clock::now();
  auto installed =
      apply::install_artifacts(*session, staged, apply::InstalledShim{}, guest_path + ".d", {})
          .value_or_throw();
  std::cout << "  (ours: fetch and unpack " << fetched << " s, install " << seconds_since(start)
            << " s)" << std::endl;
  if (installed.files_sent != 1) {
    fail("our install sent " + std::to_string(installed.files_sent) + " files");
  }
}

} // namespace

int main(int argc, char** argv) {
  const std::uint64_t mib = test::mib_argument(argc, argv, "artifact_transfer_bench", 256);
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
  guest::SshSessionOptions ssh;
  ssh.vm = "vm1";
  ssh.host = "127.0.0.1";
  ssh.port = guest.info().port;
  ssh.user = guest.info().user;
  ssh.state_dir = state;
  ssh.password = guest.info().password.value_or("");
  ssh.password_from_environment = true;
  ssh.connect_timeout = std::chrono::seconds(5);

  const std::uint64_t bytes = mib << 20;
  const std::string sha256 = test::write_random_file(work / "model.gguf", mib, 7);
  server->serve_file("/model.gguf", work / "model.gguf");
  const std::string url = server->url("/model.gguf");
  const std::string home = guest.info().home;
  // A session first, so the host key is pinned before either side is timed.
  guest::SshSession::connect(ssh).value_or_throw();

  // Ours, in a child: its peak RSS is then its own.
  ::sync();
  auto start = Clock::now();
  const pid_t child = ::fork();
  if (child == 0) {
    try {
      run_ours(url, sha256, ca->ca_file(), work / "ours", ssh, home + "/ours/model.gguf");
    } catch (const Error& e) {
      std::cerr << "artifact_transfer_bench: ours: " << e.message() << '\n';
      std::_Exit(1);
    }
    std::_Exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  const double ours = seconds_since(start);
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  const long our_rss_kib = usage.ru_maxrss;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fail("our fetch and install failed");
  }
  if (util::sha256_file_hex(home + "/ours/model.gguf").value_or_throw() != sha256) {
    fail("our copy in the guest has other bytes");
  }

  // The peer: curl into a file (hashed afterwards, as a careful user would), then scp.
  ::sync();
  start = Clock::now();
  auto curl = test::run_command(
      {"/usr/bin/curl", "-fsS", "--cacert", ca->ca_file(), "-o", work / "peer.gguf", url});
  if (curl.exit_status != 0) {
    fail("curl: " + curl.stderr_text);
  }
  const double peer_download = seconds_since(start);
  if (util::sha256_file_hex(work / "peer.gguf").value_or_throw() != sha256) {
    fail("curl's copy has other bytes");
  }
  const auto scp_start = Clock::now();
  auto scp = test::run_command({"/usr/bin/scp",
                                "-q",
                                "-P",
                                std::to_string(guest.info().port),
                                "-i",
                                state + "/vms/vm1/ssh_ed25519",
                                "-o",
                                "StrictHostKeyChecking=no",
                                "-o",
                                "UserKnownHostsFile=/dev/null",
                                "-o",
                                "BatchMode=yes",
                                work / "peer.gguf",
                                guest.info().user + "@127.0.0.1:" + home + "/peer.gguf"});
  const double peer = seconds_since(start);
  const double peer_copy = seconds_since(scp_start);
  if (scp.exit_status != 0) {
    fail("scp: " + scp.stderr_text);
  }

  const double mibf = static_cast<double>(bytes) / (1 << 20);
  std::cout << "artifact of " << mib << " MiB, loopback HTTPS -> host -> guest-sim over SSH\n"
            << "  lume-unlock fetch + install: " << ours << " s (" << mibf / ours
            << " MiB/s), peak RSS " << our_rss_kib / 1024 << " MiB\n"
            << "  curl + sha256 + scp:        " << peer << " s (" << mibf / peer << " MiB/s; curl "
            << peer_download << " s, scp " << peer_copy << " s)\n"
            << "  ratio ours/peer: " << ours / peer << "\n";
  return 0;
}
