// `lume-unlock ssh` in-process against guest-sim and a minimal stand-in for Lume's
// GET /lume/vms/<name> (the real lume-sim is another issue).
#include "cli/app.hpp"
#include "support/guest_sim.hpp"
#include "support/process.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <sstream>
#include <thread>

namespace lume_unlock::cli {
namespace {

using test::GuestSim;
using test::TempDir;

/// Answers GET /lume/vms/<name> like Lume 0.5.3 (reference/lume-api.md §3.3): "vm1" runs at
/// 127.0.0.1, "off" is stopped, anything else is 400 {"message": "Virtual machine not found: …"}.
class FakeLume {
public:
  FakeLume() : m_port(test::free_loopback_port()) {
    m_server.Get(R"(/lume/vms/([^/]+))", [](const httplib::Request& request, httplib::Response& response) {
      const std::string name = request.matches[1];
      if (name == "vm1" || name == "off") {
        nlohmann::json body = {{"name", name}, {"os", "macOS"}, {"cpuCount", 8},
                               {"memorySize", 17179869184LL}, {"status", name == "vm1" ? "running" : "stopped"},
                               {"ipAddress", name == "vm1" ? nlohmann::json("127.0.0.1") : nlohmann::json()},
                               {"sshAvailable", name == "vm1" ? nlohmann::json(true) : nlohmann::json()},
                               {"locationName", "home"}, {"networkMode", "nat"}};
        response.set_content(body.dump(), "application/json");
      } else {
        response.status = 400;
        response.set_content(nlohmann::json{{"message", "Virtual machine not found: " + name}}.dump(),
                             "application/json");
      }
    });
    m_thread = std::thread([this] { m_server.listen("127.0.0.1", m_port); });
    test::wait_for_tcp(m_port, std::chrono::seconds(5));
  }
  ~FakeLume() {
    m_server.stop();
    m_thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

private:
  int m_port;
  httplib::Server m_server;
  std::thread m_thread;
};

struct CliRun {
  int exit_code;
  std::string out;
  std::string err;
};

class CliSsh : public ::testing::Test {
protected:
  void SetUp() override {
    auto problem = sim.start();
    LUME_UNLOCK_REQUIRE(!problem, problem.value_or(""));
    LUME_UNLOCK_REQUIRE(sim.info().password.has_value(),
                        "guest-sim runs key-only unless it runs as root");
    setenv("LUME_UNLOCK_CLI_TEST_PW", sim.info().password->c_str(), 1);
  }
  void TearDown() override { unsetenv("LUME_UNLOCK_CLI_TEST_PW"); }

  CliRun run(const std::string& vm, std::vector<std::string> tail, std::vector<std::string> before = {}) {
    std::vector<std::string> args = {"lume-unlock", "--lume-url", lume.url(), "--state-dir", state.path()};
    args.insert(args.end(), before.begin(), before.end());
    std::vector<std::string> command = {"ssh", vm, "--ssh-port", std::to_string(sim.info().port),
                                        "--ssh-user", sim.info().user, "--ssh-password-env",
                                        "LUME_UNLOCK_CLI_TEST_PW"};
    args.insert(args.end(), command.begin(), command.end());
    args.insert(args.end(), tail.begin(), tail.end());
    std::vector<const char*> argv;
    for (const auto& a : args) {
      argv.push_back(a.c_str());
    }
    std::ostringstream out;
    std::ostringstream err;
    int code = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
    return {code, out.str(), err.str()};
  }

  FakeLume lume;
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
  EXPECT_EQ(doc, (nlohmann::json{{"vm", "vm1"}, {"exit_status", 4}, {"stdout", "out"}, {"stderr", "err"}}));
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
            "lume-unlock: error: finding the address of VM 'ghost': Lume said: Virtual machine not "
            "found: ghost\nhint: list the VMs with 'lume ls'\n");
}

TEST_F(CliSsh, StoppedVmIsAGuestError) {
  auto r = run("off", {"--", "true"});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_EQ(r.err,
            "lume-unlock: error: finding the address of VM 'off': VM 'off' is not running "
            "(status 'stopped')\nhint: start it with 'lume run off --no-display'\n");
}

TEST_F(CliSsh, HelpSaysInteractiveShellsAreOutOfScope) {
  std::vector<const char*> argv = {"lume-unlock", "ssh", "--help"};
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_cli(3, argv.data(), out, err), 0);
  for (const char* text : {"Interactive", "--ssh-user", "--ssh-port", "--ssh-password-env",
                           "--ssh-accept-new-host-key"}) {
    EXPECT_NE(out.str().find(text), std::string::npos) << text << " missing from:\n" << out.str();
  }
}

} // namespace
} // namespace lume_unlock::cli
