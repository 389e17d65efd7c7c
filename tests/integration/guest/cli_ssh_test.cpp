// `lume-unlock ssh` in-process against guest-sim and lume-sim: lume-sim reports guest-sim's
// address for its running VMs, as Lume reports the guest's.
#include "cli/app.hpp"
#include "lume/client.hpp"
#include "support/cli_run.hpp"
#include "support/guest_sim.hpp"
#include "support/lume_sim.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <sstream>
#include <thread>

namespace lume_unlock::cli {
namespace {

using test::CliRun;

using test::GuestSim;
using test::TempDir;

class CliSsh : public ::testing::Test {
protected:
  void SetUp() override {
    auto problem = sim.start();
    LUME_UNLOCK_REQUIRE(!problem, problem.value_or(""));
    LUME_UNLOCK_REQUIRE(sim.info().password.has_value(),
                        "guest-sim runs key-only unless it runs as root");
    setenv("LUME_UNLOCK_CLI_TEST_PW", sim.info().password->c_str(), 1);
    lume = std::make_unique<test::LumeSim>(LUME_SIM_BINARY,
                                           std::vector<std::string>{"--guest-address",
                                                                    "127.0.0.1",
                                                                    "--guest-ssh-port",
                                                                    std::to_string(sim.info().port),
                                                                    "--create-delay-ms",
                                                                    "0",
                                                                    "--boot-delay-ms",
                                                                    "0"});
    LUME_UNLOCK_REQUIRE(lume->started(), lume->failure());
    // "vm1" runs (at guest-sim's address), "off" stays stopped.
    lume::ClientOptions options;
    options.base_url = lume->url();
    lume::LumeClient client(options);
    for (const char* name : {"vm1", "off"}) {
      lume::CreateRequest create;
      create.name = name;
      create.os = "linux";
      create.cpu = 2;
      create.memory_bytes = 4ULL << 30;
      create.disk_bytes = 10ULL << 30;
      ASSERT_TRUE(client.create(create).ok());
      lume::WaitOptions wait;
      wait.what = "create";
      wait.timeout = std::chrono::seconds(10);
      ASSERT_TRUE(lume::wait_until(client, lume::VmRef{name}, lume::is_stopped, wait).ok());
    }
    ASSERT_TRUE(client.run(lume::VmRef{"vm1"}, lume::RunOptions{}).ok());
  }
  void TearDown() override { unsetenv("LUME_UNLOCK_CLI_TEST_PW"); }

  CliRun
  run(const std::string& vm, std::vector<std::string> tail, std::vector<std::string> before = {}) {
    std::vector<std::string> args = {"--lume-url", lume->url(), "--state-dir", state.path()};
    args.insert(args.end(), before.begin(), before.end());
    std::vector<std::string> command = {"ssh",
                                        vm,
                                        "--ssh-port",
                                        std::to_string(sim.info().port),
                                        "--ssh-user",
                                        sim.info().user,
                                        "--ssh-password-env",
                                        "LUME_UNLOCK_CLI_TEST_PW"};
    args.insert(args.end(), command.begin(), command.end());
    args.insert(args.end(), tail.begin(), tail.end());
    return test::run_lume_unlock(args);
  }

  std::unique_ptr<test::LumeSim> lume;
  TempDir state{"lume-unlock-state"};
  TempDir sim_dir{"guest-sim"};
  GuestSim sim{sim_dir.path()};
};

TEST_F(CliSsh, WordsArriveAsTypedAndTheExitStatusIsZero) {
  auto r = run("vm1", {"--", "printf", "%s", "a b'c"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "a b'c");
  EXPECT_EQ(r.err, "installed the per-VM SSH key in the guest; later logins use it\n");
}

TEST_F(CliSsh, RemoteExitStatusBecomesTheExitCode) {
  auto f = run("vm1", {"--", "false"});
  EXPECT_EQ(f.exit_code, 1) << f.err;
  auto seven = run("vm1", {"--", "sh", "-c", "echo to-stderr >&2; exit 7"});
  EXPECT_EQ(seven.exit_code, 7);
  EXPECT_EQ(seven.err, "to-stderr\n");
}

TEST_F(CliSsh, JsonOutputCarriesTheStreamsAndStatus) {
  auto r = run("vm1", {"--", "sh", "-c", "printf out; printf err >&2; exit 4"}, {"--json"});
  EXPECT_EQ(r.exit_code, 4);
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(
      doc,
      (nlohmann::json{{"vm", "vm1"}, {"exit_status", 4}, {"stdout", "out"}, {"stderr", "err"}}));
}

TEST_F(CliSsh, NoCommandIsAUsageError) {
  auto r = run("vm1", {});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "lume-unlock: error: ssh 'vm1': no command given\n"
            "hint: interactive shells are out of scope: give a command after '--', e.g. "
            "'lume-unlock ssh vm1 -- uname -a' (or use 'lume ssh vm1' for a shell)\n");
}

TEST_F(CliSsh, UnknownVmIsALumeError) {
  auto r = run("ghost", {"--", "true"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err,
            "lume-unlock: error: status of VM 'ghost': Lume answered HTTP 400: Virtual machine not "
            "found: ghost\nhint: list the VMs Lume knows with `lume ls`\n");
}

TEST_F(CliSsh, StoppedVmIsALumeStateError) {
  auto r = run("off", {"--", "true"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err,
            "lume-unlock: error: guest of VM 'off': the VM is stopped, not running\nhint: start it "
            "with 'lume run off --no-display' (or 'lume-unlock create off', which boots it)\n");
}

TEST_F(CliSsh, HelpSaysInteractiveShellsAreOutOfScope) {
  std::vector<const char*> argv = {"lume-unlock", "ssh", "--help"};
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_cli(3, argv.data(), out, err), 0);
  for (const char* text : {"Interactive",
                           "--ssh-user",
                           "--ssh-port",
                           "--ssh-password-env",
                           "--ssh-accept-new-host-key"}) {
    EXPECT_NE(out.str().find(text), std::string::npos) << text << " missing from:\n" << out.str();
  }
}

} // namespace
} // namespace lume_unlock::cli
