// The second VM: a fresh `lume-unlock create` against `lume-unlock clone` of a verified golden VM
// plus its converge, for the same recipe, on the stand-ins (lume-sim --guest-home --guest-disks,
// guest-sim, docker-registry over TLS behind a byte-counting relay). Each run makes one VM each
// way and deletes it again; printed per run and as medians: bytes pulled from the registry (by
// lume-unlock and Lume together), SSH commands, and lume-unlock's wall time with and without
// the boot step (the boot is Lume's and the guest's time, the same for both). Before each fresh
// create the guest home is reset to guest-sim's first state, so that create starts from a stock
// guest, as a freshly pulled image does. Run manually:
//   build/tests/bench/clone_bench [--mib 1024] [--runs 5]
// (--mib: the seeded image's disk, in 64 MiB parts; a real macOS image holds tens of GiB, so
// this is far below what a real create pulls). ctest runs it as a smoke test, --mib 1 --runs 1.
// Exit 77 (skipped) without guest-sim's password login or docker-registry, unless CI.
#include "oci/registry_client.hpp"
#include "support/bench_arguments.hpp"
#include "support/dropping_proxy.hpp"
#include "support/guest_sim.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/lume_sim.hpp"
#include "support/process.hpp"
#include "support/random_file.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <limits>
#include <vector>

namespace {

using namespace lume_unlock;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "clone_bench: " << what << '\n';
  std::exit(1);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

/// One command's figures.
struct Made {
  double wall = 0;     ///< lume-unlock's whole run
  double boot = 0;     ///< its boot step (Lume starting the VM, SSH coming up)
  double bytes = 0;    ///< from the registry during the run
  double ssh = 0;      ///< SSH commands
  std::string summary; ///< every step's seconds, '*' where it changed something
};

class World {
public:
  World(const test::GuestSim& guest,
        const test::LumeSim& lume,
        const test::DroppingProxy& relay,
        std::string state,
        std::string ca)
      : m_guest(guest), m_lume(lume), m_relay(relay), m_state(std::move(state)),
        m_ca(std::move(ca)) {}

  test::CommandOutput lume_unlock(std::vector<std::string> words) const {
    std::vector<std::string> argv = {
        LUME_UNLOCK_BINARY, "--json", "--lume-url", m_lume.url(), "--state-dir", m_state};
    argv.insert(argv.end(), words.begin(), words.end());
    argv.insert(
        argv.end(),
        {"--ssh-port", std::to_string(m_guest.info().port), "--ssh-user", m_guest.info().user});
    return test::run_command(argv,
                             {{"LUME_UNLOCK_GUEST_PASSWORD", *m_guest.info().password},
                              {"SSL_CERT_FILE", m_ca},
                              {"LUME_UNLOCK_CACHE_DIR", m_state + "/cache"}});
  }

  Made timed(const std::vector<std::string>& words) const {
    const std::uint64_t before = m_relay.received();
    const auto started = Clock::now();
    const auto run = lume_unlock(words);
    Made made;
    made.wall = std::chrono::duration<double>(Clock::now() - started).count();
    made.bytes = static_cast<double>(m_relay.received() - before);
    if (run.exit_status != 0) {
      fail(words[0] + " failed: " + run.stderr_text + run.stdout_text);
    }
    const json doc = json::parse(run.stdout_text);
    made.ssh = doc["counts"]["ssh_commands"].get<double>();
    for (const auto& step : doc["steps"]) {
      if (step["id"] == "boot") {
        made.boot = step.value("seconds", 0.0);
      }
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.2f", step.value("seconds", 0.0));
      made.summary += (made.summary.empty() ? "" : " ") + step["id"].get<std::string>() +
                      (step["outcome"] == "changed" ? "*" : "") + "=" + seconds;
    }
    return made;
  }

  void must(const std::vector<std::string>& words) const {
    const auto run = lume_unlock(words);
    if (run.exit_status != 0) {
      fail(words[0] + " failed: " + run.stderr_text + run.stdout_text);
    }
  }

private:
  const test::GuestSim& m_guest;
  const test::LumeSim& m_lume;
  const test::DroppingProxy& m_relay;
  std::string m_state;
  std::string m_ca;
};

void print(const char* what, const Made& m) {
  std::cout << "    " << what << ": " << m.wall << " s (" << m.wall - m.boot << " s without boot), "
            << static_cast<std::uint64_t>(m.bytes) << " bytes pulled, " << m.ssh
            << " SSH commands\n      steps (s, * changed): " << m.summary << "\n";
}

} // namespace

int main(int argc, char** argv) {
  const test::BenchArguments arguments =
      test::parse_bench_arguments(argc, argv, "clone_bench", {1024, 5});
  const bool ci = test::running_in_ci();
  const auto skip = [&](const std::string& why) {
    std::cerr << "clone_bench: skipped: " << why << '\n';
    return ci ? 1 : 77;
  };
  test::TempDir work("lume-unlock-clone-bench");
  test::TempDir guest_dir("lume-unlock-clone-bench-guest");
  test::GuestSim guest(guest_dir.path());
  if (auto problem = guest.start()) {
    return skip(*problem);
  }
  if (!guest.info().password) {
    return skip("guest-sim runs key-only unless it runs as root");
  }
  std::string why;
  auto registry = test::RegistryServer::start(why);
  if (!registry) {
    return skip(why);
  }
  test::DroppingProxy relay(registry->port(), std::numeric_limits<std::uint64_t>::max());
  oci::RegistryClient client(registry->client_options());
  const auto image = oci::parse_reference(registry->host() + "/lume-test/tahoe:latest").value();
  test::LumeImageSpec spec;
  spec.disk_bytes = arguments.mib << 20;
  spec.chunk_bytes = 64u << 20;
  if (auto seeded = test::seed_lume_image(client, image, spec); !seeded.ok()) {
    fail("seeding the image: " + seeded.error().message());
  }
  const std::string home = guest.info().home;
  test::LumeSim lume(LUME_SIM_BINARY,
                     {"--guest-address",
                      "127.0.0.1",
                      "--guest-ssh-port",
                      std::to_string(guest.info().port),
                      "--registry-ca",
                      registry->ca_file(),
                      "--guest-home",
                      home,
                      "--guest-disks",
                      "--create-delay-ms",
                      "0",
                      "--boot-delay-ms",
                      "0",
                      "--stop-delay-ms",
                      "0",
                      "--pull-delay-ms",
                      "0"});
  if (!lume.started()) {
    fail("lume-sim: " + lume.failure());
  }
  // The recipe: the image through the counting relay, the probe as an agent, one artifact.
  const std::string support = home + "/Library/Application Support/LumeUnlock";
  test::write_random_file(work / "weights.bin", 4, 11);
  const std::string recipe = work / "recipe.yaml";
  util::write_file_atomic(
      recipe,
      "source:\n  image: 127.0.0.1:" + std::to_string(relay.port()) +
          "/lume-test/tahoe:latest\nvm:\n  cpu: 2\n  memory: 4GB\n"
          "shim:\n  profile:\n    apple_family_max: 1009\n    max_threadgroup_memory: 65536\n"
          "enablement:\n  - name: probe-agent\n    program: " +
          support +
          "/bin/lume-unlock-probe\n    args: [\"--json\"]\n    agent: true\n    keep_alive: false\n"
          "install:\n  - {file: \"" +
          work.path() + "/weights.bin\", dest: \"" + home + "/models/weights.bin\"}\n",
      0644)
      .value_or_throw();
  const std::string pristine = work / "pristine-home";
  test::run_command({"/bin/cp", "-a", home, pristine});
  const auto reset_guest = [&] {
    test::run_command({"/bin/sh",
                       "-c",
                       "find \"$1\" -mindepth 1 -delete && cp -a \"$2\"/. \"$1\"",
                       "sh",
                       home,
                       pristine});
  };
  World world(guest, lume, relay, work / "state", registry->ca_file());
  const std::vector<std::string> common = {"--bundle", SHIM_BUNDLE_DIR, "--ssh-wait", "5"};
  const auto with_common = [&](std::vector<std::string> words) {
    words.insert(words.end(), common.begin(), common.end());
    return words;
  };

  // The golden VM: created, verified, stopped (its guest is saved with its disk).
  reset_guest();
  world.must(with_common({"create", "golden", "--recipe", recipe}));
  world.must({"verify", "golden"});
  const auto stopped = test::run_command({"/usr/bin/curl",
                                          "-sS",
                                          "-f",
                                          "-X",
                                          "POST",
                                          "-H",
                                          "Content-Type: application/json",
                                          "-d",
                                          "{}",
                                          lume.url() + "/lume/vms/golden/stop"});
  if (stopped.exit_status != 0) {
    fail("stopping the golden VM: " + stopped.stderr_text);
  }

  std::vector<double> create_walls, create_own, clone_walls, clone_own, ratios;
  std::vector<double> create_bytes, clone_bytes, create_ssh, clone_ssh;
  std::cout << std::fixed << std::setprecision(3) << "fresh create vs clone + converge: image of "
            << arguments.mib << " MiB, a 4 MiB install: item, " << arguments.runs << " runs each\n";
  for (int i = 0; i < arguments.runs; ++i) {
    const std::string fresh = "fresh-" + std::to_string(i);
    const std::string copy = "clone-" + std::to_string(i);
    reset_guest();
    const Made created = world.timed(with_common({"create", fresh, "--recipe", recipe}));
    world.must({"remove", fresh, "--delete-vm"});
    const Made cloned = world.timed(with_common({"clone", "golden", copy}));
    world.must({"remove", copy, "--delete-vm"});
    std::cout << "  run " << i + 1 << ":\n";
    print("create", created);
    print("clone ", cloned);
    create_walls.push_back(created.wall);
    create_own.push_back(created.wall - created.boot);
    clone_walls.push_back(cloned.wall);
    clone_own.push_back(cloned.wall - cloned.boot);
    ratios.push_back((cloned.wall - cloned.boot) / (created.wall - created.boot));
    create_bytes.push_back(created.bytes);
    clone_bytes.push_back(cloned.bytes);
    create_ssh.push_back(created.ssh);
    clone_ssh.push_back(cloned.ssh);
  }
  std::cout << "medians:\n"
            << "  fresh create:    " << median(create_walls) << " s, " << median(create_own)
            << " s without boot, " << static_cast<std::uint64_t>(median(create_bytes))
            << " bytes pulled, " << median(create_ssh) << " SSH commands\n"
            << "  clone + converge: " << median(clone_walls) << " s, " << median(clone_own)
            << " s without boot, " << static_cast<std::uint64_t>(median(clone_bytes))
            << " bytes pulled, " << median(clone_ssh) << " SSH commands\n"
            << "  clone/create without boot: " << median(ratios) << " (goal <= 0.10)\n";
  return 0;
}
