// One writer per VM (issue 15): `allow add` and `create` started at the same moment against one
// VM, as separate lume-unlock processes (lume-sim, guest-sim, docker-registry), wait for each
// other on <state>/vms/<vm>/lock; every exit code matches what is in the guest and the records.
#include "pipeline/vm_state.hpp"
#include "pipeline_fixture.hpp"
#include "provenance/provenance.hpp"

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

namespace lume_unlock::test {
namespace {

using Concurrency = PipelineWorld;

/// Rounds of five writers started at once, each round a fresh race for the VM's lock: four
/// rounds (twenty writers) take about 14 s on the 2-core machine, where ten took 96 s of a
/// 570 s test run.
constexpr int k_rounds = 4;

/// The connection flags every run against guest-sim needs.
std::vector<std::string> connection(int port, const std::string& user) {
  return {"--ssh-port",
          std::to_string(port),
          "--ssh-user",
          user,
          "--ssh-password-env",
          "LUME_UNLOCK_PIPELINE_TEST_PW"};
}

/// The entries of the guest's enablement.json, by name.
std::map<std::string, nlohmann::json> guest_entries(const std::string& support_dir) {
  std::map<std::string, nlohmann::json> out;
  auto text = util::read_file(support_dir + "/enablement.json");
  if (!text.ok()) {
    return out;
  }
  const nlohmann::json document = nlohmann::json::parse(text.value());
  for (const auto& entry : document["enablement"]) {
    out[entry["name"].get<std::string>()] = entry;
  }
  return out;
}

TEST_F(Concurrency, ThreeAllowAddsAndTwoCreatesAtOnceSerializeAndLoseNothing) {
  start_world();
  CliRun first = create();
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;

  const auto started = std::chrono::steady_clock::now();
  std::vector<std::string> added;
  for (int round = 0; round < k_rounds; ++round) {
    struct Run {
      std::string entry; ///< empty for a create
      std::unique_ptr<ChildProcess> process;
    };
    std::vector<Run> runs;
    const auto launch =
        [&](const std::string& name, const std::string& entry, std::vector<std::string> command) {
          std::vector<std::string> argv = {LUME_UNLOCK_BINARY,
                                           "--lume-url",
                                           lume->url(),
                                           "--state-dir",
                                           state.path(),
                                           "--lock-timeout",
                                           "120"};
          argv.insert(argv.end(), command.begin(), command.end());
          for (const auto& word : connection(ssh_port, guest.info().user)) {
            argv.push_back(word);
          }
          ChildProcess::Options options;
          options.argv = argv;
          options.log_dir = files.path();
          options.name = name + "-" + std::to_string(round);
          runs.push_back({entry, std::make_unique<ChildProcess>(options)});
        };
    for (int i = 0; i < 3; ++i) {
      const std::string entry = "r" + std::to_string(round) + "-e" + std::to_string(i);
      std::vector<std::string> command = {"allow", "add", "vm1", entry, "--program", probe_path()};
      // One agent per round, the others exec-only: both kinds of entry race.
      if (i != 0) {
        command.push_back("--no-agent");
      } else {
        command.insert(command.end(), {"--arg", "--json", "--no-keep-alive"});
      }
      launch("allow", entry, command);
    }
    for (int i = 0; i < 2; ++i) {
      launch("create",
             "",
             {"create", "vm1", "--recipe", recipe, "--bundle", SHIM_BUNDLE_DIR, "--ssh-wait", "2"});
    }
    for (auto& run : runs) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
      while (run.process->running() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }

    const auto entries = guest_entries(support_dir());
    const auto record = provenance::read_provenance(state.path(), "vm1");
    ASSERT_TRUE(record.ok()) << record.error().message();
    std::map<std::string, std::string> recorded;
    for (const auto& entry : *record.value().enablement) {
      recorded[entry.name] = provenance::origin_of(entry);
    }
    for (auto& run : runs) {
      const int code = run.process->stop();
      const std::string log = run.process->stderr_text();
      // Everyone waits for the lock instead of failing: every run succeeds.
      EXPECT_EQ(code, 0) << "round " << round << " " << (run.entry.empty() ? "create" : run.entry)
                         << ": " << log;
      if (run.entry.empty()) {
        continue;
      }
      // The exit code matches the final state: an entry that exited 0 is applied and recorded.
      EXPECT_EQ(entries.count(run.entry) == 1, code == 0) << run.entry << ": " << log;
      EXPECT_EQ(recorded.count(run.entry) == 1, code == 0) << run.entry;
      if (code == 0) {
        EXPECT_EQ(recorded[run.entry], "allow") << run.entry;
        added.push_back(run.entry);
      }
    }
    // No entry of an earlier round was lost, and the recipe's is still there.
    for (const auto& entry : added) {
      EXPECT_EQ(entries.count(entry), 1u) << "round " << round << ": lost " << entry;
    }
    EXPECT_EQ(recorded["probe-agent"], "recipe");
    EXPECT_EQ(entries.size(), recorded.size());

    CliRun status = cli({"status", "vm1"});
    EXPECT_EQ(status.exit_code, 0) << "round " << round << ": " << status.out << status.err;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "[measure] " << k_rounds << " rounds of 3 allow add + 2 create at once: " << seconds
            << " s\n";
  EXPECT_EQ(added.size(), 3u * k_rounds);
  EXPECT_EQ(leftovers(), "");
  // Nothing stays in the guest's staging directory: each run removed its own.
  EXPECT_EQ(
      run_command({"/bin/sh", "-c", "ls -A \"$1\" 2>/dev/null", "sh", support_dir() + "/staging"})
          .stdout_text,
      "");

  CliRun listed = cli({"allow", "list", "vm1"}, true, {"--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  // The document must outlive the loop: a range-for over a member of a temporary dangles.
  const nlohmann::json document = json_of(listed);
  ASSERT_EQ(document["enablement"].size(), 1u + 3u * k_rounds) << listed.out;
  for (const auto& entry : document["enablement"]) {
    EXPECT_EQ(entry["origin"], entry["name"] == "probe-agent" ? "recipe" : "allow") << entry;
  }
}

TEST_F(Concurrency, ASecondWriterGivesUpAfterTheLockTimeoutNamingTheHolder) {
  start_world();
  ASSERT_TRUE(util::make_directories(state.path() + "/vms/vm1").ok());
  auto held = util::FileLock::acquire(
      pipeline::vm_lock_path(state.path(), lume::VmName::parse("vm1").value()),
      "pid 4242 ('lume-unlock create vm1', started 2026-12-03T10:00:00Z)",
      std::chrono::milliseconds(0));
  ASSERT_TRUE(held.ok());
  lume->stop(); // asking Lume anything would now fail with exit 3
  CliRun run =
      cli({"allow", "add", "vm1", "x", "--program", "/bin/sh"}, true, {"--lock-timeout", "0.2"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("VM 'vm1' is busy: allow add"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("still held after 0.2 s by pid 4242 ('lume-unlock create vm1', started "
                         "2026-12-03T10:00:00Z)"),
            std::string::npos)
      << run.err;
  // Read-only commands take no lock: this one gets past it and fails only at Lume.
  CliRun dry = cli({"create", "vm1", "--recipe", recipe, "--dry-run"}, false);
  EXPECT_EQ(dry.exit_code, 3) << dry.err;
}

TEST_F(Concurrency, AStateDirectoryThatCannotBeWrittenIsRefusedBeforeLumeIsAsked) {
  start_world();
  // A plain file where the state directory should be: unwritable even for root.
  const std::string not_a_directory = files / "state-file";
  ASSERT_TRUE(util::write_file_atomic(not_a_directory, "x").ok());
  lume->stop(); // asking Lume anything would now fail with exit 3
  CliRun run = run_lume_unlock({"--lume-url",
                                lume->url(),
                                "--state-dir",
                                not_a_directory,
                                "create",
                                "vm1",
                                "--recipe",
                                recipe,
                                "--bundle",
                                SHIM_BUNDLE_DIR});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("state directory '" + not_a_directory + "/vms/vm1': not writable"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("hint: make it writable"), std::string::npos) << run.err;
}

} // namespace
} // namespace lume_unlock::test
