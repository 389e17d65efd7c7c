// SshSession against guest-sim: a real OpenSSH sshd on 127.0.0.1 (DESIGN §10).
#include "guest/guest_records.hpp"
#include "guest/shell_quote.hpp"
#include "guest/ssh_session.hpp"
#include "support/file_io.hpp"
#include "support/guest_sim.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

namespace lume_unlock::guest {
namespace {

namespace fs = std::filesystem;
using test::GuestSim;
using test::mode_of;
using test::slurp;
using test::TempDir;

/// "SHA256:…" of a public key file, computed by OpenSSH's ssh-keygen (an independent check).
std::string openssh_fingerprint(const std::string& public_key_file) {
  auto out =
      test::run_command({"/usr/bin/ssh-keygen", "-l", "-E", "sha256", "-f", public_key_file});
  auto start = out.stdout_text.find("SHA256:");
  return out.stdout_text.substr(start, out.stdout_text.find(' ', start) - start);
}

class GuestSsh : public ::testing::Test {
protected:
  void SetUp() override {
    std::vector<std::string> extra;
    if (geteuid() != 0) {
      // Unprivileged guest-sim is key-only: give it a per-VM key made by OpenSSH up front.
      fs::create_directories(state.path() + "/vms/vm1");
      test::run_command({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key_path()});
      extra = {"--authorized-key", key_path() + ".pub"};
    }
    auto problem = sim.start(extra);
    LUME_UNLOCK_REQUIRE(!problem, problem.value_or(""));
  }

  bool has_password() const { return sim.info().password.has_value(); }

  SshSessionOptions options(std::optional<std::string> password = std::nullopt) const {
    SshSessionOptions o;
    o.vm = "vm1";
    o.host = "127.0.0.1";
    o.port = sim.info().port;
    o.user = sim.info().user;
    o.state_dir = state.path();
    o.password = password.value_or(sim.info().password.value_or(""));
    o.password_from_environment = true;
    o.connect_timeout = std::chrono::seconds(5);
    return o;
  }

  std::unique_ptr<SshSession> connect(const SshSessionOptions& o) {
    auto session = SshSession::connect(o);
    if (!session.ok()) {
      ADD_FAILURE() << session.error().message() << "\nhint: " << session.error().hint();
      return nullptr;
    }
    return std::move(session).value();
  }

  std::string target() const {
    return "VM 'vm1' (" + sim.info().user + "@127.0.0.1:" + std::to_string(sim.info().port) + ")";
  }
  std::string home() const { return sim.info().home; }
  std::string key_path() const { return state.path() + "/vms/vm1/ssh_ed25519"; }

  TempDir state{"lume-unlock-state"};
  TempDir sim_dir{"guest-sim"};
  GuestSim sim{sim_dir.path()}; // declared last: stopped before the directories go
};

#define REQUIRE_PASSWORD_LOGIN()                                                                   \
  LUME_UNLOCK_REQUIRE(has_password(), "guest-sim runs key-only unless it runs as root")

TEST_F(GuestSsh, FirstContactUsesThePasswordThenInstallsAKeyThatTheNextLoginUses) {
  REQUIRE_PASSWORD_LOGIN();
  auto first = connect(options());
  ASSERT_TRUE(first);
  EXPECT_EQ(first->auth_method(), AuthMethod::password);
  EXPECT_TRUE(first->installed_key());
  EXPECT_EQ(first->command_count(), 1u); // the key installation
  first.reset();

  EXPECT_EQ(mode_of(key_path()), 0600u);
  EXPECT_EQ(mode_of(home() + "/.ssh"), 0700u);
  EXPECT_EQ(mode_of(home() + "/.ssh/authorized_keys"), 0600u);
  const std::string public_line = slurp(key_path() + ".pub");
  EXPECT_EQ(public_line.rfind("ssh-ed25519 ", 0), 0u) << public_line;
  EXPECT_EQ(slurp(home() + "/.ssh/authorized_keys"), public_line);

  // The key now suffices: a wrong password does not matter any more.
  auto second = connect(options("not-the-password"));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->auth_method(), AuthMethod::public_key);
  EXPECT_FALSE(second->installed_key());
  auto who = second->run("id -un");
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who.value().stdout_text, sim.info().user + "\n");
}

TEST_F(GuestSsh, KeyboardInteractiveOnlyGuestGetsThePasswordAtItsPrompt) {
  REQUIRE_PASSWORD_LOGIN();
  // Restart the guest as macOS sshd with PAM may run: "password" not offered, only
  // keyboard-interactive (PAM's "Password:" prompt).
  ASSERT_EQ(sim.stop(), 0);
  auto problem = sim.start({"--keyboard-interactive-only"});
  ASSERT_FALSE(problem) << *problem;
  ASSERT_NE(slurp(sim.dir() + "/etc/sshd_config").find("PasswordAuthentication no"),
            std::string::npos);

  const std::string wrong = "wrong-" + *sim.info().password;
  auto refused = SshSession::connect(options(wrong));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("the guest rejected the password"), std::string::npos)
      << refused.error().message();
  EXPECT_EQ((refused.error().message() + refused.error().hint()).find(wrong), std::string::npos);

  auto first = connect(options());
  ASSERT_TRUE(first);
  EXPECT_EQ(first->auth_method(), AuthMethod::keyboard_interactive);
  EXPECT_TRUE(first->installed_key());
  first.reset();
  const std::string log = slurp(sim.dir() + "/log/sshd.log");
  EXPECT_NE(log.find("Accepted keyboard-interactive/pam for " + sim.info().user), std::string::npos)
      << log;
  EXPECT_EQ(log.find(*sim.info().password), std::string::npos) << "the password is never logged";
  auto next = connect(options("not-the-password"));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->auth_method(), AuthMethod::public_key);
}

TEST_F(GuestSsh, APerVmKeyOthersCanReadIsRefusedWithTheChmodToRun) {
  if (!fs::exists(key_path())) {
    fs::create_directories(state.path() + "/vms/vm1");
    test::run_command({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key_path()});
  }
  fs::permissions(key_path(), static_cast<fs::perms>(0644));
  auto session = SshSession::connect(options());
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().category(), ErrorCategory::usage);
  EXPECT_EQ(session.error().message(),
            "per-VM SSH key '" + key_path() +
                "': has mode 0644: other users may read it, so it is refused (OpenSSH refuses "
                "such keys too)");
  EXPECT_EQ(session.error().hint(), "run: chmod 600 '" + key_path() + "'");
  fs::permissions(key_path(), static_cast<fs::perms>(0600));
  EXPECT_TRUE(connect(options()));
}

TEST_F(GuestSsh, BadAuthorizedKeysPermissionsAreRepairedWithoutADuplicateKey) {
  REQUIRE_PASSWORD_LOGIN();
  ASSERT_TRUE(connect(options()));
  {
    auto s = connect(options());
    ASSERT_TRUE(s);
    // sshd's StrictModes ignores a world-writable authorized_keys: the key stops working.
    ASSERT_EQ(s->run("chmod 666 \"$HOME/.ssh/authorized_keys\"").value().exit_status, 0);
  }
  auto repaired = connect(options());
  ASSERT_TRUE(repaired);
  EXPECT_EQ(repaired->auth_method(), AuthMethod::password);
  EXPECT_EQ(mode_of(home() + "/.ssh/authorized_keys"), 0600u);
  EXPECT_EQ(slurp(home() + "/.ssh/authorized_keys"), slurp(key_path() + ".pub"));
  repaired.reset();
  auto next = connect(options());
  ASSERT_TRUE(next);
  EXPECT_EQ(next->auth_method(), AuthMethod::public_key);
}

TEST_F(GuestSsh, RejectedKeyFallsBackToThePasswordAndIsAppendedOnItsOwnLine) {
  REQUIRE_PASSWORD_LOGIN();
  {
    auto s = connect(options());
    ASSERT_TRUE(s);
    ASSERT_EQ(s->run("printf 'ssh-ed25519 AAAAother someone' > \"$HOME/.ssh/authorized_keys\"")
                  .value()
                  .exit_status,
              0);
  }
  auto again = connect(options());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->auth_method(), AuthMethod::password);
  EXPECT_TRUE(again->installed_key());
  EXPECT_EQ(slurp(home() + "/.ssh/authorized_keys"),
            "ssh-ed25519 AAAAother someone\n" + slurp(key_path() + ".pub"));
}

TEST_F(GuestSsh, RejectedKeyWithoutPasswordNamesTheKey) {
  REQUIRE_PASSWORD_LOGIN();
  {
    auto s = connect(options());
    ASSERT_TRUE(s);
    ASSERT_EQ(s->run(": > \"$HOME/.ssh/authorized_keys\"").value().exit_status, 0);
  }
  auto refused = SshSession::connect(options(""));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category(), ErrorCategory::guest);
  EXPECT_EQ(refused.error().message(),
            "logging in as '" + sim.info().user + "' to " + target() +
                ": the guest rejected the per-VM key '" + key_path() +
                "' and no password was given");
  EXPECT_EQ(refused.error().hint(),
            "enable password login for '" + sim.info().user + "' in the guest once, or add '" +
                key_path() + ".pub' to its ~/.ssh/authorized_keys");
}

TEST_F(GuestSsh, WrongPasswordIsRefusedWithoutRevealingIt) {
  REQUIRE_PASSWORD_LOGIN();
  auto o = options("wrong-password-123");
  o.password_env = "MY_GUEST_PW";
  auto refused = SshSession::connect(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category(), ErrorCategory::guest);
  EXPECT_EQ(
      refused.error().message(),
      "logging in as '" + sim.info().user + "' to " + target() +
          ": there is no per-VM key yet, and the guest rejected the password in $MY_GUEST_PW");
  EXPECT_EQ(refused.error().hint(),
            "put the guest user's password in $MY_GUEST_PW (or name another variable with "
            "--ssh-password-env; --ssh-user sets the user)");
  EXPECT_EQ(refused.error().message().find("wrong-password-123"), std::string::npos);
  EXPECT_FALSE(fs::exists(key_path())) << "no key is made before a successful login";
}

TEST_F(GuestSsh, DefaultPasswordIsNamedAsSuch) {
  REQUIRE_PASSWORD_LOGIN();
  auto o = options("lume");
  o.password_from_environment = false;
  auto refused = SshSession::connect(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().why(),
            "there is no per-VM key yet, and the guest rejected the image default password "
            "($LUME_UNLOCK_GUEST_PASSWORD is not set)");
}

TEST_F(GuestSsh, HostKeyIsPinnedAndAChangedKeyIsRefusedUntilAccepted) {
  REQUIRE_PASSWORD_LOGIN();
  const std::string host_pub = sim_dir.path() + "/etc/ssh_host_ed25519_key.pub";
  const std::string old_fingerprint = openssh_fingerprint(host_pub);
  {
    auto s = connect(options());
    ASSERT_TRUE(s);
    EXPECT_EQ(s->host_key_fingerprint(), old_fingerprint);
  }
  const std::string pin = state.path() + "/vms/vm1/known_host";
  std::string host_key_line = slurp(host_pub);
  host_key_line = host_key_line.substr(0, host_key_line.rfind(' ')) + "\n"; // without the comment
  EXPECT_EQ(slurp(pin), host_key_line);

  const std::string port = std::to_string(sim.info().port);
  ASSERT_EQ(sim.stop(), 0);
  auto problem = sim.start({"--port", port, "--new-host-key"});
  ASSERT_FALSE(problem) << *problem;
  const std::string new_fingerprint = openssh_fingerprint(host_pub);
  ASSERT_NE(new_fingerprint, old_fingerprint);

  auto refused = SshSession::connect(options());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category(), ErrorCategory::guest);
  EXPECT_EQ(refused.error().message(),
            "connecting to " + target() + ": the guest's host key changed: pinned " +
                old_fingerprint + " (in '" + pin + "'), offered " + new_fingerprint);
  EXPECT_EQ(refused.error().hint(),
            "if VM 'vm1' was recreated or reinstalled on purpose, rerun with "
            "--ssh-accept-new-host-key to pin the new key; otherwise another machine may be "
            "answering at 127.0.0.1");
  EXPECT_EQ(slurp(pin), host_key_line) << "a refused key must not replace the pin";

  auto accept = options();
  accept.accept_new_host_key = true;
  ASSERT_TRUE(connect(accept));
  auto pinned_again = connect(options());
  ASSERT_TRUE(pinned_again);
  EXPECT_EQ(pinned_again->host_key_fingerprint(), new_fingerprint);
  EXPECT_EQ(pinned_again->auth_method(), AuthMethod::public_key);
}

TEST_F(GuestSsh, ClosedPortIsRefusedWithAHint) {
  auto o = options("x");
  o.port = test::free_loopback_port();
  auto refused = SshSession::connect(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().category(), ErrorCategory::guest);
  EXPECT_EQ(refused.error().message(),
            "connecting to VM 'vm1' (" + o.user + "@127.0.0.1:" + std::to_string(o.port) +
                "): Connection refused");
  EXPECT_EQ(refused.error().hint(),
            "nothing listens on port " + std::to_string(o.port) +
                ": check that Remote Login (sshd) is on in the guest and the port (--ssh-port) "
                "is right");
}

TEST_F(GuestSsh, SilentGuestTimesOut) {
  // Accepts TCP (the kernel completes the handshake) but never sends an SSH banner.
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t length = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &length);
  auto o = options("x");
  o.port = ntohs(addr.sin_port);
  o.connect_timeout = std::chrono::milliseconds(700);
  const auto started = std::chrono::steady_clock::now();
  auto refused = SshSession::connect(o);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  close(listener);
  ASSERT_FALSE(refused.ok());
  EXPECT_LT(elapsed, std::chrono::seconds(4));
  EXPECT_GE(elapsed, std::chrono::milliseconds(600));
  EXPECT_EQ(refused.error().category(), ErrorCategory::guest);
  EXPECT_EQ(refused.error().what_failed(),
            "connecting to VM 'vm1' (" + o.user + "@127.0.0.1:" + std::to_string(o.port) + ")");
  EXPECT_EQ(refused.error().why().rfind("no answer within 700 ms (", 0), 0u)
      << refused.error().why();
  EXPECT_EQ(refused.error().hint(),
            "check that the VM is running and has finished booting ('lume-unlock status vm1'), "
            "then retry");
}

TEST_F(GuestSsh, MissingRemoteCommandSurfacesExit127) {
  auto s = connect(options());
  ASSERT_TRUE(s);
  auto result = s->run("lume-unlock-no-such-command --flag");
  ASSERT_TRUE(result.ok()) << result.error().message();
  EXPECT_EQ(result.value().exit_status, 127);
  EXPECT_NE(result.value().stderr_text.find("lume-unlock-no-such-command: command not found"),
            std::string::npos)
      << result.value().stderr_text;
}

TEST_F(GuestSsh, RunSeparatesStdoutStderrAndExitStatus) {
  auto s = connect(options());
  ASSERT_TRUE(s);
  auto result = s->run("printf out; printf err >&2; exit 3");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value().stdout_text, "out");
  EXPECT_EQ(result.value().stderr_text, "err");
  EXPECT_EQ(result.value().exit_status, 3);
  auto big = s->run("head -c 1000000 /dev/zero; head -c 300000 /dev/zero >&2");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big.value().stdout_text.size(), 1000000u);
  EXPECT_EQ(big.value().stderr_text.size(), 300000u);
  auto stdin_closed = s->run("cat; echo done");
  ASSERT_TRUE(stdin_closed.ok());
  EXPECT_EQ(stdin_closed.value().stdout_text, "done\n");
}

TEST_F(GuestSsh, UploadIsOneTransferAndOneCommandAndReadsBack) {
  auto s = connect(options());
  ASSERT_TRUE(s);
  std::string bytes;
  for (int i = 0; i < 3 * 256 * 300; ++i) {
    bytes += static_cast<char>(i % 256); // every byte value, across several SFTP chunks
  }
  const std::string dir = home() + "/Library/Application Support/LumeUnlock/bin";
  const std::string path = dir + "/lume-unlock-probe";

  // Missing directory: one extra command (mkdir -p) the first time only.
  auto commands = s->command_count();
  auto transfers = s->sftp_transfer_count();
  ASSERT_TRUE(s->upload(bytes, path, 0755).ok());
  EXPECT_EQ(s->command_count() - commands, 2u);
  EXPECT_EQ(s->sftp_transfer_count() - transfers, 1u);
  EXPECT_EQ(slurp(path), bytes);
  EXPECT_EQ(mode_of(path), 0755u);

  // Replacing an existing file: exactly 1 SFTP transfer + 1 command.
  commands = s->command_count();
  transfers = s->sftp_transfer_count();
  ASSERT_TRUE(s->upload("new content\n", path, 0640).ok());
  EXPECT_EQ(s->command_count() - commands, 1u);
  EXPECT_EQ(s->sftp_transfer_count() - transfers, 1u);
  EXPECT_EQ(slurp(path), "new content\n");
  EXPECT_EQ(mode_of(path), 0640u);

  auto read = s->read_file(path, 12); // exactly its size
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ(read.value(), "new content\n");
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename(), "lume-unlock-probe") << "left behind: " << entry.path();
  }
}

TEST_F(GuestSsh, UploadOntoADirectoryFailsCleanly) {
  auto s = connect(options());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->run("mkdir -p \"$HOME/target/inside\"").value().exit_status, 0);
  const std::string path = home() + "/target";
  auto status = s->upload("bytes", path, 0644);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().category(), ErrorCategory::guest);
  EXPECT_EQ(status.error().message(),
            "upload of '" + path + "' to " + target() + ": the target is a directory");
  EXPECT_EQ(status.error().hint(),
            "the previous file is untouched; check the path and free space in the guest");
  EXPECT_TRUE(fs::is_directory(path));
  EXPECT_EQ(std::distance(fs::directory_iterator(path), fs::directory_iterator()), 1);
  for (const auto& entry : fs::directory_iterator(home())) {
    EXPECT_EQ(entry.path().filename().string().find(".lume-unlock-"), std::string::npos)
        << "temporary left behind: " << entry.path();
  }
}

TEST_F(GuestSsh, AFileLargerThanTheLimitIsRefusedNamingTheLimit) {
  auto s = connect(options());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->run("head -c 3000 /dev/zero > \"$HOME/big.json\"").value().exit_status, 0);
  auto read = s->read_file(home() + "/big.json", 2048);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().category(), ErrorCategory::guest);
  EXPECT_EQ(read.error().message(),
            "reading '" + home() + "/big.json' from " + target() +
                ": it is larger than the limit of 2 KiB");
}

TEST_F(GuestSsh, OutputPastTheLimitEndsTheCommandWithAnErrorNamingTheLimit) {
  auto opts = options();
  opts.max_output_bytes = 64 * 1024;
  auto s = connect(opts);
  ASSERT_TRUE(s);
  // A command that would never stop writing: the session must end it, not grow without bound.
  auto ran = s->run("yes lume-unlock");
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().category(), ErrorCategory::guest);
  EXPECT_NE(ran.error().message().find("its standard output passed the limit of 64 KiB"),
            std::string::npos)
      << ran.error().message();
  auto small = s->run("printf ok");
  ASSERT_TRUE(small.ok()) << small.error().message();
  EXPECT_EQ(small.value().stdout_text, "ok");
}

TEST_F(GuestSsh, ReadingAMissingFileNamesIt) {
  auto s = connect(options());
  ASSERT_TRUE(s);
  auto read = s->read_file(home() + "/nope.json", 4096);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message(),
            "reading '" + home() + "/nope.json' from " + target() + ": no such file or directory");
}

TEST_F(GuestSsh, DroppedConnectionDuringUploadLeavesTheOldFile) {
  auto s = connect(options());
  ASSERT_TRUE(s);
  const std::string path = home() + "/model.bin";
  ASSERT_TRUE(s->upload("old\n", path, 0644).ok());

  std::string big(128u << 20, '\0');
  std::mt19937 rng(7);
  for (auto& c : big) {
    c = static_cast<char>(rng());
  }
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    // Stop guest-sim (sshd and this session's server process) once the temporary is growing.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::error_code ec;
      for (const auto& entry : fs::directory_iterator(home(), ec)) {
        const auto name = entry.path().filename().string();
        if (name.rfind(".model.bin.lume-unlock-", 0) == 0 &&
            fs::file_size(entry.path(), ec) > (4u << 20)) {
          sim.stop();
          killed = true;
          return;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  auto status = s->upload(big, path, 0644);
  killer.join();
  ASSERT_TRUE(killed) << "the upload ended before the connection could be dropped";
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().category(), ErrorCategory::guest);
  EXPECT_EQ(status.error().what_failed(), "upload of '" + path + "' to " + target());
  EXPECT_EQ(status.error().why().rfind("writing failed after ", 0), 0u) << status.error().why();
  EXPECT_EQ(status.error().hint(),
            "the previous file is untouched; check that the VM is still running and retry");
  EXPECT_EQ(slurp(path), "old\n");
}

/// `bytes` random bytes in a host file at `path`; returns the path.
std::string random_host_file(const std::string& path, std::size_t bytes) {
  std::string data(bytes, '\0');
  std::mt19937 rng(11);
  for (auto& c : data) {
    c = static_cast<char>(rng());
  }
  test::write_file(path, data);
  return path;
}

TEST_F(GuestSsh, SendFileStreamsALargeFileAndSendsASmallOneOverSftp) {
  auto s = connect(options());
  ASSERT_TRUE(s);
  TempDir host("lume-unlock-send");
  // At the streaming threshold (4 MiB): an exec channel into `cat`, counted as a transfer.
  const std::string large = random_host_file(host.path() + "/large.bin", 4u << 20);
  const std::string target = home() + "/a dir/it's \"large\" $(x).bin";
  ASSERT_EQ(s->run("mkdir -p \"$HOME/a dir\"").value().exit_status, 0);
  const auto commands = s->command_count();
  const auto sftp = s->sftp_transfer_count();
  std::uint64_t reported = 0;
  auto sent = s->send_file(large, target, [&](std::uint64_t bytes) { reported = bytes; });
  ASSERT_TRUE(sent.ok()) << sent.error().message();
  EXPECT_EQ(sent.value(), 4u << 20);
  EXPECT_EQ(reported, 4u << 20);
  EXPECT_EQ(slurp(target), slurp(large));
  EXPECT_EQ(mode_of(target), 0600u);
  EXPECT_EQ(s->stream_transfer_count(), 1u);
  EXPECT_EQ(s->command_count(), commands) << "a transfer is not a command";
  EXPECT_EQ(s->sftp_transfer_count(), sftp);

  // Below it: SFTP, no process in the guest.
  const std::string small = random_host_file(host.path() + "/small.bin", 300000);
  auto sent_small = s->send_file(small, home() + "/small.bin", {});
  ASSERT_TRUE(sent_small.ok()) << sent_small.error().message();
  EXPECT_EQ(sent_small.value(), 300000u);
  EXPECT_EQ(slurp(home() + "/small.bin"), slurp(small));
  EXPECT_EQ(s->sftp_transfer_count(), sftp + 1);
  EXPECT_EQ(s->stream_transfer_count(), 1u);
}

TEST_F(GuestSsh, AStreamedFileTheGuestCannotStoreIsAnError) {
  {
    auto opts = options();
    opts.stream_min_bytes = 0; // every file streamed
    auto s = connect(opts);
    ASSERT_TRUE(s);
    TempDir host("lume-unlock-send");
    const std::string file = random_host_file(host.path() + "/f.bin", 1u << 20);
    const std::string target = home() + "/missing/f.bin";
    auto sent = s->send_file(file, target, {});
    ASSERT_FALSE(sent.ok());
    EXPECT_EQ(sent.error().category(), ErrorCategory::guest);
    EXPECT_EQ(sent.error().what_failed(),
              "upload of '" + file + "' as '" + target + "' to " + this->target());
    // The guest's own words name the path, whether it stopped reading early or not.
    EXPECT_NE(sent.error().why().find(target), std::string::npos) << sent.error().why();
    EXPECT_FALSE(fs::exists(home() + "/missing"));
    EXPECT_EQ(s->run("true").value().exit_status, 0) << "the session is still usable";
  }
}

TEST_F(GuestSsh, DroppedConnectionDuringAStreamedSendIsAnError) {
  auto s = connect(options());
  ASSERT_TRUE(s);
  TempDir host("lume-unlock-send");
  const std::string file = random_host_file(host.path() + "/big.bin", 128u << 20);
  const std::string target = home() + "/big.bin";
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::error_code ec;
      if (fs::exists(target, ec) && fs::file_size(target, ec) > (4u << 20)) {
        sim.stop();
        killed = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  auto sent = s->send_file(file, target, {});
  killer.join();
  ASSERT_TRUE(killed) << "the transfer ended before the connection could be dropped";
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.error().category(), ErrorCategory::guest);
  EXPECT_EQ(sent.error().why().rfind("the transfer stopped after ", 0), 0u) << sent.error().why();
  EXPECT_EQ(sent.error().hint(),
            "check that the VM is still running and has free disk space, then retry");
}

TEST_F(GuestSsh, QuotedWordsArriveByteForByte) {
  auto s = connect(options());
  ASSERT_TRUE(s);
  std::vector<std::string> words = {"",      "'",     "''", "\"",       "\\",       "$HOME", "`id`",
                                    "$(id)", "*",     "?",  "[a-z]",    "~",        "-n",    "--",
                                    "%s",    "a b'c", "\n", " ",        "\t",       "!",     "#",
                                    ";",     "&&",    "|",  "\xc3\xa9", "\xff\xfe", "\x01"};
  std::mt19937 rng(20261202);
  const std::string specials = "'\"$`\\*?[]{}~!#&;|<>() \t\n%-=";
  while (words.size() < 250) {
    std::string word;
    const auto length = rng() % 24;
    for (unsigned i = 0; i < length; ++i) {
      const auto kind = rng() % 10;
      if (kind < 4) {
        word += specials[rng() % specials.size()];
      } else if (kind < 7) {
        word += static_cast<char>(33 + rng() % 94);
      } else if (kind < 9) {
        word += static_cast<char>(0x80 + rng() % 128);
      } else {
        word += static_cast<char>(1 + rng() % 31);
      }
    }
    words.push_back(word);
  }
  for (const auto& word : words) {
    auto result = s->run("printf %s " + shell_quote(word).value());
    ASSERT_TRUE(result.ok()) << result.error().message();
    EXPECT_EQ(result.value().exit_status, 0) << testing::PrintToString(word);
    EXPECT_EQ(result.value().stdout_text, word) << testing::PrintToString(word);
    EXPECT_EQ(result.value().stderr_text, "") << testing::PrintToString(word);
  }
  // The joined form: every word is one argument.
  std::vector<std::string> argv = {"printf", "<%s>"};
  std::string expected;
  for (std::size_t i = 0; i < 40; ++i) {
    argv.push_back(words[i]);
    expected += "<" + words[i] + ">";
  }
  auto joined = s->run(shell_join(argv).value());
  ASSERT_TRUE(joined.ok());
  EXPECT_EQ(joined.value().stdout_text, expected);
}

TEST_F(GuestSsh, FactsDescribeTheSimulatedGuest) {
  auto s = connect(options());
  ASSERT_TRUE(s);
  const auto before = s->command_count();
  auto facts = gather_guest_facts(*s);
  ASSERT_TRUE(facts.ok()) << facts.error().message();
  EXPECT_EQ(s->command_count() - before, 1u);
  utsname uts{};
  uname(&uts);
  GuestFacts expected;
  expected.product_version = "26.5.2";
  expected.build_version = "25F84";
  expected.kernel = "Linux";
  expected.machine = uts.machine;
  expected.uid = getpwnam(sim.info().user.c_str())->pw_uid;
  expected.home = home();
  EXPECT_EQ(facts.value(), expected);
}

} // namespace
} // namespace lume_unlock::guest
