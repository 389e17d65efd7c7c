#pragma once
// The lume-unlock CLI in-process against guest-sim and lume-sim ("vm1" runs at guest-sim's
// address), with a helper to install a shim bundle into the guest first.
#include "apply/shim_installer.hpp"
#include "bundle/bundle.hpp"
#include "cli/app.hpp"
#include "guest/ssh_session.hpp"
#include "lume/client.hpp"
#include "support/guest_sim.hpp"
#include "support/lume_sim.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

namespace lume_unlock::test {

struct CliRun {
  int exit_code;
  std::string out;
  std::string err;
};

class CliGuestTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto problem = sim.start();
    LUME_UNLOCK_REQUIRE(!problem, problem.value_or(""));
    LUME_UNLOCK_REQUIRE(sim.info().password.has_value(),
                        "guest-sim runs key-only unless it runs as root");
    setenv("LUME_UNLOCK_APPLY_TEST_PW", sim.info().password->c_str(), 1);
    lume = std::make_unique<LumeSim>(LUME_SIM_BINARY,
                                     std::vector<std::string>{"--guest-address",
                                                              "127.0.0.1",
                                                              "--guest-ssh-port",
                                                              std::to_string(sim.info().port),
                                                              "--create-delay-ms",
                                                              "0",
                                                              "--boot-delay-ms",
                                                              "0"});
    LUME_UNLOCK_REQUIRE(lume->started(), lume->failure());
    lume::ClientOptions options;
    options.base_url = lume->url();
    lume::LumeClient client(options);
    lume::CreateRequest create;
    create.name = "vm1";
    create.os = "linux";
    create.cpu = 2;
    create.memory_bytes = 4ULL << 30;
    create.disk_bytes = 10ULL << 30;
    ASSERT_TRUE(client.create(create).ok());
    lume::WaitOptions wait;
    wait.what = "create";
    wait.timeout = std::chrono::seconds(10);
    ASSERT_TRUE(lume::wait_until(client, lume::VmRef{"vm1"}, lume::is_stopped, wait).ok());
    ASSERT_TRUE(client.run(lume::VmRef{"vm1"}, lume::RunOptions{}).ok());
  }
  void TearDown() override { unsetenv("LUME_UNLOCK_APPLY_TEST_PW"); }

  /// A session like the CLI's (same state directory: same pinned host key and per-VM key).
  std::unique_ptr<guest::SshSession> connect() {
    guest::SshSessionOptions o;
    o.vm = "vm1";
    o.host = "127.0.0.1";
    o.port = sim.info().port;
    o.user = sim.info().user;
    o.state_dir = state.path();
    o.password = *sim.info().password;
    o.password_from_environment = true;
    auto connected = guest::SshSession::connect(o);
    EXPECT_TRUE(connected.ok()) << (connected.ok() ? "" : connected.error().message());
    return connected.ok() ? std::move(connected.value()) : nullptr;
  }

  /// Installs `bundle` into the guest as `create` does; returns the guest's facts.
  guest::GuestFacts install(const bundle::LoadedBundle& bundle) {
    auto session = connect();
    auto facts = guest::gather_guest_facts(*session).value();
    auto installed = apply::install_shim(*session, bundle, facts);
    EXPECT_TRUE(installed.ok()) << (installed.ok() ? "" : installed.error().message());
    return facts;
  }

  /// `lume-unlock [global…] <command…> --ssh-…` in-process.
  CliRun run(std::vector<std::string> command,
             std::vector<std::string> tail = {},
             std::vector<std::string> global = {}) {
    std::vector<std::string> args = {
        "lume-unlock", "--lume-url", lume->url(), "--state-dir", state.path()};
    args.insert(args.end(), global.begin(), global.end());
    args.insert(args.end(), command.begin(), command.end());
    for (const std::string& word : {std::string("--ssh-port"),
                                    std::to_string(sim.info().port),
                                    std::string("--ssh-user"),
                                    sim.info().user,
                                    std::string("--ssh-password-env"),
                                    std::string("LUME_UNLOCK_APPLY_TEST_PW")}) {
      args.push_back(word);
    }
    args.insert(args.end(), tail.begin(), tail.end());
    std::vector<const char*> argv;
    for (const auto& a : args) {
      argv.push_back(a.c_str());
    }
    std::ostringstream out;
    std::ostringstream err;
    int code = cli::run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
    return {code, out.str(), err.str()};
  }

  std::unique_ptr<LumeSim> lume;
  TempDir state{"lume-unlock-state"};
  TempDir sim_dir{"guest-sim"};
  GuestSim sim{sim_dir.path()};
};

} // namespace lume_unlock::test
