// The Ansible collection (integrations/ansible) driven by a real ansible-playbook (Debian's
// ansible-core) against a fleet of three "hosts" on loopback: each its own guest-sim, lume-sim
// (packing the guest's home into pushed images, restoring it on pull) and state directory,
// reached with ansible_connection=local and host vars for --lume-url and --state-dir.
//
// Each host rolls out an image baked from its own guest: guest-sim homes differ in path from host
// to host, and a baked record names absolute guest paths, so one image cannot verify on all three
// here (on real Macs every guest's home is /Users/lume and one reference serves the fleet).
#include "support/file_io.hpp"
#include "support/guest_sim.hpp"
#include "support/lume_image_seeder.hpp"
#include "support/lume_sim.hpp"
#include "support/process.hpp"
#include "support/registry_server.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

namespace lume_unlock::test {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;
using nlohmann::json;

const std::string k_vm = "fleet";

/// One "Mac": a guest, its Lume and its lume-unlock state.
struct Host {
  explicit Host(std::string host_name) : name(std::move(host_name)) {}
  std::string name;
  TempDir guest_dir{"fleet-guest"};
  TempDir state{"fleet-state"};
  TempDir files{"fleet-files"};
  std::unique_ptr<GuestSim> guest;
  std::unique_ptr<LumeSim> lume;
  std::string pinned; ///< the image baked from this host's guest, REF@sha256:…

  std::string home() const { return guest->info().home; }
  std::string support_dir() const { return home() + "/Library/Application Support/LumeUnlock"; }
  std::string probe() const { return support_dir() + "/bin/lume-unlock-probe"; }
  std::string recipe() const { return files / "recipe.yaml"; }
  std::map<std::string, std::string> env(const std::string& ca) const {
    return {{"LUME_UNLOCK_GUEST_PASSWORD", *guest->info().password}, {"SSL_CERT_FILE", ca}};
  }
};

/// A host's line of the PLAY RECAP.
struct Recap {
  int ok = -1, changed = -1, failed = -1;
};

struct PlaybookRun {
  int status = -1;
  std::string out;
  double seconds = 0;
  std::map<std::string, Recap> recap;
};

/// path → sha256 of every regular file under `roots` (a snapshot to compare before and after).
std::map<std::string, std::string> snapshot(const std::vector<std::string>& roots) {
  std::map<std::string, std::string> files;
  for (const std::string& root : roots) {
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.is_regular_file() && !entry.is_symlink()) {
        auto digest = util::sha256_file_hex(entry.path().string());
        files[entry.path().string()] = digest.ok() ? digest.value() : "unreadable";
      }
    }
  }
  return files;
}

class Fleet : public ::testing::Test {
protected:
  void SetUp() override {
    LUME_UNLOCK_REQUIRE(fs::exists(ANSIBLE_PLAYBOOK),
                        "ansible-playbook is not installed "
                        "(scripts/bootstrap installs ansible-core)");
    std::string why;
    registry = RegistryServer::start(why);
    LUME_UNLOCK_REQUIRE(registry != nullptr, why);
    oci::RegistryClient client(registry->client_options());
    const auto base = oci::parse_reference(registry->host() + "/lume-test/tahoe:latest").value();
    auto seeded = seed_lume_image(client, base);
    ASSERT_TRUE(seeded.ok()) << seeded.error().message();
    for (const char* name : {"mini-1", "mini-2", "mini-3"}) {
      hosts.push_back(std::make_unique<Host>(name));
      Host& host = *hosts.back();
      host.guest = std::make_unique<GuestSim>(host.guest_dir.path());
      auto problem = host.guest->start();
      LUME_UNLOCK_REQUIRE(!problem, problem.value_or(""));
      LUME_UNLOCK_REQUIRE(host.guest->info().password.has_value(),
                          "guest-sim runs key-only unless it runs as root");
      host.lume = std::make_unique<LumeSim>(
          LUME_SIM_BINARY,
          std::vector<std::string>{"--guest-address",
                                   "127.0.0.1",
                                   "--guest-ssh-port",
                                   std::to_string(host.guest->info().port),
                                   "--registry",
                                   registry->host(),
                                   "--registry-ca",
                                   registry->ca_file(),
                                   "--guest-home",
                                   host.home(),
                                   "--create-delay-ms",
                                   "0",
                                   "--boot-delay-ms",
                                   "0",
                                   "--stop-delay-ms",
                                   "0",
                                   "--pull-delay-ms",
                                   "0"},
          std::map<std::string, std::string>{{"GITHUB_USERNAME", "lume-unlock-test"},
                                             {"GITHUB_TOKEN", "test-token-not-checked"}});
      LUME_UNLOCK_REQUIRE(host.lume->started(), host.lume->failure());
      ASSERT_TRUE(util::write_file_atomic(host.recipe(), recipe_for(host, base.str()), 0644).ok());
    }
    bake_every_host();
    install_collection();
    write_inventory();
  }

  static std::string recipe_for(const Host& host, const std::string& image) {
    return "source:\n  image: " + image +
           "\nvm:\n  cpu: 2\n  memory: 4GB\n"
           "shim:\n  profile:\n    apple_family_max: 1009\n    max_threadgroup_memory: 65536\n"
           "enablement:\n  - name: probe-agent\n    program: " +
           host.probe() + "\n    args: [\"--json\"]\n    agent: true\n    keep_alive: false\n";
  }

  /// `lume-unlock bake` on every host at once (the image each host then rolls out).
  void bake_every_host() {
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::future<CommandOutput>> bakes;
    for (const auto& host : hosts) {
      std::vector<std::string> argv = {LUME_UNLOCK_BINARY,
                                       "--json",
                                       "--lume-url",
                                       host->lume->url(),
                                       "--state-dir",
                                       host->state.path(),
                                       "bake",
                                       host->recipe(),
                                       "--push",
                                       registry->host() + "/acme/tahoe-llm-" + host->name + ":1",
                                       "--name",
                                       "builder",
                                       "--bundle",
                                       SHIM_BUNDLE_DIR,
                                       "--ssh-port",
                                       std::to_string(host->guest->info().port),
                                       "--ssh-user",
                                       host->guest->info().user,
                                       "--ssh-wait",
                                       "5"};
      bakes.push_back(std::async(std::launch::async, [argv, env = host->env(registry->ca_file())] {
        return run_command(argv, env);
      }));
    }
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      const CommandOutput baked = bakes[i].get();
      ASSERT_EQ(baked.exit_status, 0) << baked.stderr_text << baked.stdout_text;
      hosts[i]->pinned = json::parse(baked.stdout_text)["pinned"];
    }
    std::cout << "[measure] setup: three bakes at once: "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()
              << " s\n";
  }

  /// ansible-galaxy collection build + install, as a user would install it.
  void install_collection() {
    const auto built = run_command({ANSIBLE_GALAXY,
                                    "collection",
                                    "build",
                                    ANSIBLE_COLLECTION_SRC,
                                    "--output-path",
                                    work / "dist"},
                                   ansible_env());
    ASSERT_EQ(built.exit_status, 0) << built.stderr_text << built.stdout_text;
    const std::string tarball = work / "dist/lume_unlock-lume-0.1.0.tar.gz";
    ASSERT_TRUE(fs::exists(tarball)) << built.stdout_text;
    const auto installed = run_command(
        {ANSIBLE_GALAXY, "collection", "install", "--offline", tarball, "-p", work / "collections"},
        ansible_env());
    ASSERT_EQ(installed.exit_status, 0) << installed.stderr_text << installed.stdout_text;
  }

  std::map<std::string, std::string> ansible_env() const {
    return {{"ANSIBLE_COLLECTIONS_PATH", work / "collections"},
            {"ANSIBLE_HOME", work / "ansible-home"},
            {"ANSIBLE_LOCAL_TEMP", work / "ansible-tmp"},
            {"ANSIBLE_REMOTE_TEMP", work / "ansible-remote-tmp"},
            {"ANSIBLE_NOCOLOR", "1"},
            {"ANSIBLE_RETRY_FILES_ENABLED", "0"},
            {"ANSIBLE_LOCALHOST_WARNING", "0"},
            {"ANSIBLE_FORKS", "5"},
            {"SSL_CERT_FILE", registry->ca_file()}};
  }

  json allowlist_of(const Host& host) const {
    return json::array({{{"name", "probe-agent"},
                         {"program", host.probe()},
                         {"args", {"--json"}},
                         {"agent", true},
                         {"keep_alive", false}},
                        {{"name", "probe-once"}, {"program", host.probe()}, {"agent", false}}});
  }

  void write_inventory() {
    json fleet_hosts = json::object();
    for (const auto& host : hosts) {
      fleet_hosts[host->name] = {{"ansible_connection", "local"},
                                 {"ansible_python_interpreter", "/usr/bin/python3"},
                                 {"lume_unlock_lume_url", host->lume->url()},
                                 {"lume_unlock_state_dir", host->state.path()},
                                 {"lume_unlock_ssh_port", host->guest->info().port},
                                 {"lume_unlock_ssh_user", host->guest->info().user},
                                 {"lume_unlock_ssh_password", *host->guest->info().password},
                                 {"lume_unlock_reference", host->pinned},
                                 {"lume_unlock_allowlist", allowlist_of(*host)}};
    }
    const json inventory = {
        {"lume_hosts",
         {{"hosts", fleet_hosts},
          {"vars", {{"lume_unlock_binary", LUME_UNLOCK_BINARY}, {"lume_unlock_vm", k_vm}}}}}};
    ASSERT_TRUE(util::write_file_atomic(inventory_path(), inventory.dump(2), 0600).ok());
    // One allowlist entry on one host, with its own lock timeout: the concurrency phase.
    const std::string one_entry =
        "- hosts: \"{{ target }}\"\n  gather_facts: false\n  tasks:\n"
        "    - lume_unlock.lume.lume_unlock_allow:\n"
        "        name: fleet\n"
        "        binary: \"{{ lume_unlock_binary }}\"\n"
        "        lume_url: \"{{ lume_unlock_lume_url }}\"\n"
        "        state_dir: \"{{ lume_unlock_state_dir }}\"\n"
        "        ssh_port: \"{{ lume_unlock_ssh_port }}\"\n"
        "        ssh_user: \"{{ lume_unlock_ssh_user }}\"\n"
        "        ssh_password: \"{{ lume_unlock_ssh_password }}\"\n"
        "        lock_timeout: \"{{ lock_timeout | default(60) }}\"\n"
        "        entries:\n"
        "          - name: \"{{ entry }}\"\n"
        "            program: \"{{ lume_unlock_allowlist[1].program }}\"\n"
        "            agent: false\n";
    ASSERT_TRUE(util::write_file_atomic(work / "one-entry.yml", one_entry, 0644).ok());
  }

  std::string inventory_path() const { return work / "inventory.json"; }

  std::vector<std::string> rollout(std::vector<std::string> extra = {}) const {
    extra.insert(extra.begin(), "lume_unlock.lume.rollout");
    return extra;
  }

  PlaybookRun playbook(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {ANSIBLE_PLAYBOOK, "-i", inventory_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto started = std::chrono::steady_clock::now();
    const CommandOutput run = run_command(argv, ansible_env());
    PlaybookRun result;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    result.status = run.exit_status;
    result.out = run.stdout_text + run.stderr_text;
    static const std::regex line(
        R"((\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+))");
    for (auto it = std::sregex_iterator(run.stdout_text.begin(), run.stdout_text.end(), line);
         it != std::sregex_iterator();
         ++it) {
      result.recap[(*it)[1]] = {std::stoi((*it)[2]), std::stoi((*it)[3]), std::stoi((*it)[4])};
    }
    return result;
  }

  /// The entry names (sorted) `lume-unlock allow list` shows for a host's VM.
  std::vector<std::string> entries_of(const Host& host) const {
    const auto listed = run_command({LUME_UNLOCK_BINARY,
                                     "--json",
                                     "--lume-url",
                                     host.lume->url(),
                                     "--state-dir",
                                     host.state.path(),
                                     "allow",
                                     "list",
                                     k_vm,
                                     "--ssh-port",
                                     std::to_string(host.guest->info().port),
                                     "--ssh-user",
                                     host.guest->info().user},
                                    host.env(registry->ca_file()));
    EXPECT_EQ(listed.exit_status, 0) << listed.stderr_text << listed.stdout_text;
    std::vector<std::string> names;
    const json doc = json::parse(listed.stdout_text, nullptr, false);
    for (const auto& entry : doc.value("enablement", json::array())) {
      names.push_back(entry["name"]);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::vector<std::string> everything_a_run_may_change() const {
    std::vector<std::string> roots;
    for (const auto& host : hosts) {
      roots.insert(roots.end(), {host->state.path(), host->home(), host->lume->home()});
    }
    return roots;
  }

  TempDir work{"fleet-ansible"};
  std::unique_ptr<RegistryServer> registry;
  std::vector<std::unique_ptr<Host>> hosts;
};

#define EXPECT_RECAP(run, host, want_changed, want_failed)                                         \
  do {                                                                                             \
    ASSERT_TRUE((run).recap.count(host)) << "no recap for " << (host) << ":\n" << (run).out;       \
    EXPECT_EQ((run).recap.at(host).changed, want_changed) << (host) << ":\n" << (run).out;         \
    EXPECT_EQ((run).recap.at(host).failed, want_failed) << (host) << ":\n" << (run).out;           \
  } while (false)

TEST_F(Fleet, RollsOutIsIdempotentChecksWithoutChangesSerializesPlaysAndReportsDrift) {
  // --check first: every host would change, and nothing does (state dirs, guests, Lume's VMs).
  const auto before = snapshot(everything_a_run_may_change());
  const PlaybookRun check = playbook(rollout({"--check", "--diff"}));
  EXPECT_EQ(check.status, 0) << check.out;
  for (const auto& host : hosts) {
    EXPECT_RECAP(check, host->name, 1, 0);
  }
  EXPECT_EQ(snapshot(everything_a_run_may_change()), before) << "--check changed files";
  EXPECT_THAT(check.out, HasSubstr("pull"));

  const PlaybookRun first = playbook(rollout());
  ASSERT_EQ(first.status, 0) << first.out;
  for (const auto& host : hosts) {
    EXPECT_RECAP(first, host->name, 2, 0); // pulled and verified; allowlist applied
    EXPECT_EQ(entries_of(*host), (std::vector<std::string>{"probe-agent", "probe-once"}));
  }
  EXPECT_THAT(first.out, HasSubstr("'result': 'changed'"));

  const PlaybookRun second = playbook(rollout());
  ASSERT_EQ(second.status, 0) << second.out;
  for (const auto& host : hosts) {
    EXPECT_RECAP(second, host->name, 0, 0);
  }
  std::cout << "[measure] three-host rollout (serial 2): " << first.seconds
            << " s; the no-op second run: " << second.seconds << " s; --check: " << check.seconds
            << " s\n";

  // Two plays reach mini-3 at once, each adding its own entry: the VM's lock serializes them
  // and neither update is lost.
  Host& third = *hosts[2];
  auto play_a = std::async(std::launch::async, [&] {
    return playbook({work / "one-entry.yml", "-e", "target=mini-3", "-e", "entry=extra-a"});
  });
  auto play_b = std::async(std::launch::async, [&] {
    return playbook({work / "one-entry.yml", "-e", "target=mini-3", "-e", "entry=extra-b"});
  });
  const PlaybookRun a = play_a.get();
  const PlaybookRun b = play_b.get();
  EXPECT_EQ(a.status, 0) << a.out;
  EXPECT_EQ(b.status, 0) << b.out;
  EXPECT_RECAP(a, "mini-3", 1, 0);
  EXPECT_RECAP(b, "mini-3", 1, 0);
  EXPECT_EQ(entries_of(third),
            (std::vector<std::string>{"extra-a", "extra-b", "probe-agent", "probe-once"}));

  // The rollout's allowlist is exclusive: the two extra entries go, nothing else changes.
  const PlaybookRun exclusive = playbook(rollout({"--limit", "mini-3"}));
  EXPECT_EQ(exclusive.status, 0) << exclusive.out;
  EXPECT_RECAP(exclusive, "mini-3", 1, 0);
  EXPECT_EQ(entries_of(third), (std::vector<std::string>{"probe-agent", "probe-once"}));

  // Another run holds mini-2's VM: a play with a 1 s lock timeout fails naming the holder.
  Host& second_host = *hosts[1];
  ChildProcess holder({{"/usr/bin/python3",
                        "-c",
                        "import fcntl, os, sys, time\n"
                        "f = open(sys.argv[1], 'a+')\n"
                        "fcntl.flock(f, fcntl.LOCK_EX)\n"
                        "f.truncate(0); f.write(\"pid %d ('fleet test holder')\" % os.getpid())\n"
                        "f.flush(); print('locked', flush=True); time.sleep(120)\n",
                        second_host.state / ("vms/" + k_vm + "/lock")},
                       {},
                       work.path(),
                       "lock-holder",
                       {}});
  ASSERT_EQ(holder.wait_for_stdout_line(std::chrono::seconds(10)).value_or(""), "locked");
  const PlaybookRun locked = playbook({work / "one-entry.yml",
                                       "-e",
                                       "target=mini-2",
                                       "-e",
                                       "entry=extra-c",
                                       "-e",
                                       "lock_timeout=1"});
  holder.stop();
  EXPECT_NE(locked.status, 0) << locked.out;
  EXPECT_RECAP(locked, "mini-2", 0, 1);
  const std::string holder_text = "pid " + std::to_string(holder.pid()) + " ('fleet test holder')";
  EXPECT_THAT(locked.out, HasSubstr("still held after 1.0 s by " + holder_text));
  EXPECT_THAT(locked.out, HasSubstr("\"lock_holder\": \"" + holder_text + "\""));
  EXPECT_EQ(entries_of(second_host), (std::vector<std::string>{"probe-agent", "probe-once"}));

  // Drift on mini-1 (its shim and its enablement list edited in the guest): that host fails
  // naming both, the others roll on unchanged.
  Host& drifted = *hosts[0];
  std::string shim;
  for (const auto& entry : fs::recursive_directory_iterator(drifted.support_dir() + "/shim")) {
    if (entry.path().filename() == "liblume-unlock-shim.so") {
      shim = entry.path().string();
    }
  }
  ASSERT_FALSE(shim.empty());
  std::string bytes = slurp(shim);
  bytes[bytes.size() / 2] ^= 0x5a;
  ASSERT_TRUE(util::write_file_atomic(shim, bytes, 0755).ok());
  const std::string enablement = drifted.support_dir() + "/enablement.json";
  json list = json::parse(slurp(enablement));
  ASSERT_EQ(list["enablement"].size(), 2u) << list.dump();
  list["enablement"].erase(1); // probe-once is no longer listed in the guest
  ASSERT_TRUE(util::write_file_atomic(enablement, list.dump(2), 0644).ok());
  // Play keywords see extra vars, not inventory vars: one failed host of a batch of two is 50%.
  const PlaybookRun drift = playbook(rollout({"-e", "lume_unlock_max_fail_percentage=50"}));
  EXPECT_EQ(drift.status, 2) << drift.out;
  EXPECT_RECAP(drift, "mini-1", 0, 1);
  EXPECT_RECAP(drift, "mini-2", 0, 0);
  EXPECT_RECAP(drift, "mini-3", 0, 0);
  EXPECT_THAT(drift.out, HasSubstr("not verified against the baked record in VM 'fleet'"));
  EXPECT_THAT(drift.out, HasSubstr("\"item\": \"shim file " + shim + "\""));
  EXPECT_THAT(drift.out, HasSubstr("\"item\": \"enablement.json\""));
  EXPECT_THAT(drift.out, HasSubstr("mini-1: {'result': 'failed'"));

  // mini-2's VM, verified and stopped, is a golden VM: check mode plans a clone of it and
  // changes nothing.
  const auto verified = run_command({LUME_UNLOCK_BINARY,
                                     "--lume-url",
                                     second_host.lume->url(),
                                     "--state-dir",
                                     second_host.state.path(),
                                     "verify",
                                     k_vm,
                                     "--ssh-port",
                                     std::to_string(second_host.guest->info().port),
                                     "--ssh-user",
                                     second_host.guest->info().user},
                                    second_host.env(registry->ca_file()));
  ASSERT_EQ(verified.exit_status, 0) << verified.stderr_text << verified.stdout_text;
  const auto stopped = run_command({"/usr/bin/curl",
                                    "-sS",
                                    "-f",
                                    "-X",
                                    "POST",
                                    "-H",
                                    "Content-Type: application/json",
                                    "-d",
                                    "{}",
                                    second_host.lume->url() + "/lume/vms/fleet/stop"});
  ASSERT_EQ(stopped.exit_status, 0) << stopped.stderr_text;
  const std::string clone_play = "- hosts: mini-2\n  gather_facts: false\n  tasks:\n"
                                 "    - lume_unlock.lume.lume_unlock_vm:\n"
                                 "        name: worker-1\n"
                                 "        recipe: " +
                                 second_host.recipe() +
                                 "\n"
                                 "        from: fleet\n"
                                 "        bundle: " SHIM_BUNDLE_DIR "\n"
                                 "        binary: \"{{ lume_unlock_binary }}\"\n"
                                 "        lume_url: \"{{ lume_unlock_lume_url }}\"\n"
                                 "        state_dir: \"{{ lume_unlock_state_dir }}\"\n"
                                 "        ssh_port: \"{{ lume_unlock_ssh_port }}\"\n"
                                 "        ssh_user: \"{{ lume_unlock_ssh_user }}\"\n"
                                 "        ssh_password: \"{{ lume_unlock_ssh_password }}\"\n";
  ASSERT_TRUE(util::write_file_atomic(work / "clone.yml", clone_play, 0644).ok());
  const auto untouched = snapshot(everything_a_run_may_change());
  const PlaybookRun clone_check = playbook({work / "clone.yml", "--check", "--diff"});
  EXPECT_EQ(clone_check.status, 0) << clone_check.out;
  EXPECT_RECAP(clone_check, "mini-2", 1, 0);
  EXPECT_THAT(clone_check.out, HasSubstr("clone the verified VM 'fleet'"));
  EXPECT_EQ(snapshot(everything_a_run_may_change()), untouched) << "--check changed files";
}

} // namespace
} // namespace lume_unlock::test
