#pragma once
// Shared by the apply integration tests: a guest-sim fixture with an SSH session, and a session
// wrapper that can damage uploads or drop the connection.
#include "guest/guest_records.hpp"
#include "guest/ssh_session.hpp"
#include "support/file_io.hpp"
#include "support/guest_sim.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>

namespace lume_unlock::test {

/// guest-sim started per test, with a connected SshSession.
class SimGuestTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::vector<std::string> extra;
    if (geteuid() != 0) {
      // Unprivileged guest-sim is key-only: give it the per-VM key up front.
      std::filesystem::create_directories(state.path() + "/vms/vm1");
      run_command({"/usr/bin/ssh-keygen",
                   "-q",
                   "-t",
                   "ed25519",
                   "-N",
                   "",
                   "-f",
                   state.path() + "/vms/vm1/ssh_ed25519"});
      extra = {"--authorized-key", state.path() + "/vms/vm1/ssh_ed25519.pub"};
    }
    auto problem = sim.start(extra);
    LUME_UNLOCK_REQUIRE(!problem, problem.value_or(""));
    session = connect();
    ASSERT_TRUE(session);
    auto gathered = guest::gather_guest_facts(*session);
    ASSERT_TRUE(gathered.ok()) << gathered.error().message();
    facts = gathered.value();
  }

  guest::SshSessionOptions options() const {
    guest::SshSessionOptions o;
    o.vm = "vm1";
    o.host = "127.0.0.1";
    o.port = sim.info().port;
    o.user = sim.info().user;
    o.state_dir = state.path();
    o.password = sim.info().password.value_or("");
    o.password_from_environment = true;
    o.connect_timeout = std::chrono::seconds(5);
    return o;
  }

  std::unique_ptr<guest::SshSession> connect() {
    auto connected = guest::SshSession::connect(options());
    if (!connected.ok()) {
      ADD_FAILURE() << connected.error().message();
      return nullptr;
    }
    return std::move(connected.value());
  }

  /// Runs a shell command in the guest and expects it to succeed; returns its stdout.
  std::string guest_sh(const std::string& command) {
    auto ran = session->run(command);
    EXPECT_TRUE(ran.ok()) << (ran.ok() ? "" : ran.error().message());
    if (!ran.ok()) {
      return {};
    }
    EXPECT_EQ(ran.value().exit_status, 0) << command << "\n" << ran.value().stderr_text;
    return ran.value().stdout_text;
  }

  TempDir dir{"lume-unlock-apply"};
  TempDir state{"lume-unlock-apply-state"};
  GuestSim sim{dir.path()};
  std::unique_ptr<guest::SshSession> session;
  guest::GuestFacts facts;
};

/// A GuestSession that forwards to another and can misbehave: change the bytes of an upload,
/// or drop the connection (destroy the real session) once `drop_at_command` commands ran.
class UnreliableSession final : public guest::GuestSession {
public:
  explicit UnreliableSession(std::unique_ptr<guest::GuestSession> inner)
      : m_inner(std::move(inner)) {}

  std::function<std::string(std::string)> damage_upload; ///< applied to every upload's bytes
  /// Drop once this many commands ran (counting the inner session's own, e.g. an upload's
  /// verify-and-rename); 0 = never.
  std::uint64_t drop_at_command = 0;

  Result<guest::CommandResult> run(const std::string& command) override {
    if (dropped()) {
      return gone();
    }
    return m_inner->run(command);
  }
  Status upload(std::string_view bytes, const std::string& remote_path, mode_t mode) override {
    if (dropped()) {
      return gone();
    }
    if (damage_upload) {
      const std::string damaged = damage_upload(std::string(bytes));
      return m_inner->upload(damaged, remote_path, mode);
    }
    return m_inner->upload(bytes, remote_path, mode);
  }
  Result<std::uint64_t> send_file(const std::string& local_path,
                                  const std::string& remote_path,
                                  const std::function<void(std::uint64_t)>& sent) override {
    if (dropped()) {
      return gone();
    }
    return m_inner->send_file(local_path, remote_path, sent);
  }
  Result<std::string> read_file(const std::string& remote_path, std::size_t max_bytes) override {
    if (dropped()) {
      return gone();
    }
    return m_inner->read_file(remote_path, max_bytes);
  }
  Result<std::string>
  read_range(const std::string& remote_path, std::uint64_t offset, std::size_t length) override {
    if (dropped()) {
      return gone();
    }
    return m_inner->read_range(remote_path, offset, length);
  }
  std::uint64_t command_count() const override {
    return m_inner ? m_inner->command_count() : m_commands;
  }

private:
  bool dropped() {
    if (drop_at_command != 0 && m_inner && m_inner->command_count() >= drop_at_command) {
      m_commands = m_inner->command_count();
      m_inner.reset(); // closes the TCP connection
    }
    return !m_inner;
  }
  static Error gone() {
    return Error(ErrorCategory::guest, "running a command on vm1", "the connection dropped");
  }

  std::unique_ptr<guest::GuestSession> m_inner;
  std::uint64_t m_commands = 0;
};

} // namespace lume_unlock::test
