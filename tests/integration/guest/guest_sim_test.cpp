// guest-sim's fake macOS userland, exercised through a real SSH session as lume-unlock will.
#include "guest/shell_quote.hpp"
#include "guest/ssh_session.hpp"
#include "support/file_io.hpp"
#include "support/guest_sim.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

namespace lume_unlock::guest {
namespace {

namespace fs = std::filesystem;
using test::GuestSim;
using test::slurp;
using test::TempDir;

std::string plist(const std::string& body) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
         "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
         "<plist version=\"1.0\">\n<dict>\n" +
         body + "</dict>\n</plist>\n";
}

/// True while `pid` exists and is not a zombie (PID 1 here may reap late).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  const auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

std::string q(const std::string& word) {
  return shell_quote(word).value();
}

class GuestSimUserland : public ::testing::Test {
protected:
  void SetUp() override {
    std::vector<std::string> extra;
    const std::string key = state.path() + "/vms/sim/ssh_ed25519";
    if (geteuid() != 0) {
      fs::create_directories(state.path() + "/vms/sim");
      test::run_command({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key});
      extra = {"--authorized-key", key + ".pub"};
    }
    auto problem = sim.start(extra);
    LUME_UNLOCK_REQUIRE(!problem, problem.value_or(""));
    SshSessionOptions o;
    o.vm = "sim";
    o.host = "127.0.0.1";
    o.port = sim.info().port;
    o.user = sim.info().user;
    o.state_dir = state.path();
    o.password = sim.info().password.value_or("");
    auto connected = SshSession::connect(o);
    ASSERT_TRUE(connected.ok()) << connected.error().message();
    session = std::move(connected).value();
    uid = std::to_string(getpwnam(sim.info().user.c_str())->pw_uid);
  }

  CommandResult run(const std::string& command) {
    auto result = session->run(command);
    EXPECT_TRUE(result.ok()) << result.error().message();
    return result.ok() ? result.value() : CommandResult{};
  }

  /// Writes a plist into ~/Library/LaunchAgents and returns its path.
  std::string agent(const std::string& name, const std::string& body, mode_t mode = 0644) {
    const std::string path = sim.info().home + "/Library/LaunchAgents/" + name + ".plist";
    auto status = session->upload(plist(body), path, mode);
    EXPECT_TRUE(status.ok()) << status.error().message();
    return path;
  }

  std::string domain() const { return "gui/" + uid; }

  bool wait_for_file(const std::string& path, const std::string& content) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (slurp(path) == content) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  TempDir state{"lume-unlock-state"};
  TempDir sim_dir{"guest-sim"};
  GuestSim sim{sim_dir.path()};
  std::unique_ptr<SshSession> session;
  std::string uid;
};

TEST_F(GuestSimUserland, SwVersClaimsTahoe) {
  EXPECT_EQ(run("sw_vers -productVersion").stdout_text, "26.5.2\n");
  EXPECT_EQ(run("sw_vers -buildVersion").stdout_text, "25F84\n");
  EXPECT_EQ(run("sw_vers").stdout_text,
            "ProductName:\t\tmacOS\nProductVersion:\t\t26.5.2\nBuildVersion:\t\t25F84\n");
  EXPECT_EQ(run("uname -s").stdout_text, "Linux\n");
}

TEST_F(GuestSimUserland, ShasumComputesAndChecks) {
  auto sum = run("printf abc > f && shasum -a 256 f");
  EXPECT_EQ(sum.stdout_text,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  f\n");
  auto ok = run("shasum -a 256 f > f.sha && shasum -a 256 -c f.sha");
  EXPECT_EQ(ok.exit_status, 0);
  EXPECT_EQ(ok.stdout_text, "f: OK\n");
  auto bad = run("printf abd > f && shasum -a 256 -c f.sha");
  EXPECT_EQ(bad.exit_status, 1);
  EXPECT_EQ(bad.stdout_text, "f: FAILED\n");
}

TEST_F(GuestSimUserland, PlutilLintUsesPlistlib) {
  auto good = agent("good", "<key>Label</key><string>x</string>\n");
  auto ok = run("plutil -lint " + q(good));
  EXPECT_EQ(ok.exit_status, 0);
  EXPECT_EQ(ok.stdout_text, good + ": OK\n");
  auto bad = agent("bad", "<key>Label</key><key>Oops</key>\n");
  auto lint = run("plutil -lint " + q(bad));
  EXPECT_EQ(lint.exit_status, 1);
  EXPECT_EQ(lint.stdout_text.rfind(bad + ": ", 0), 0u) << lint.stdout_text;
}

TEST_F(GuestSimUserland, XcodeToolsAreTheStubsOfAGuestWithoutCommandLineTools) {
  for (const char* tool : {"lipo -archs /bin/ls", "otool -h /bin/ls", "codesign -d -v /bin/ls"}) {
    SCOPED_TRACE(tool);
    auto ran = run(tool);
    EXPECT_EQ(ran.exit_status, 1);
    EXPECT_EQ(ran.stdout_text, "");
    EXPECT_EQ(ran.stderr_text.rfind(
                  "xcode-select: note: No developer tools were found, requesting install.\n", 0),
              0u)
        << ran.stderr_text;
  }
}

struct BadPlist {
  const char* name;
  std::string body;
  std::string detail;
};

TEST_F(GuestSimUserland, BootstrapValidatesLikeLaunchd) {
  const std::vector<BadPlist> cases = {
      {"no-label",
       "<key>ProgramArguments</key><array><string>/bin/true</string></array>\n",
       "missing required key 'Label' (a non-empty string)"},
      {"no-program",
       "<key>Label</key><string>dev.t.a</string>\n",
       "missing required key 'ProgramArguments' (or 'Program')"},
      {"args-not-array",
       "<key>Label</key><string>dev.t.b</string><key>ProgramArguments</key><string>/bin/true</"
       "string>\n",
       "'ProgramArguments' must be a non-empty array of strings"},
      {"args-not-strings",
       "<key>Label</key><string>dev.t.c</string><key>ProgramArguments</key><array><integer>1</"
       "integer></array>\n",
       "'ProgramArguments' must be a non-empty array of strings"},
      {"env-not-strings",
       "<key>Label</key><string>dev.t.d</string><key>ProgramArguments</key><array><string>/bin/"
       "true</string></array><key>EnvironmentVariables</key><dict><key>A</key><integer>1</"
       "integer></dict>\n",
       "'EnvironmentVariables' must be a dictionary of strings"},
  };
  for (const auto& c : cases) {
    auto path = agent(c.name, c.body);
    auto r = run("launchctl bootstrap " + domain() + " " + q(path));
    EXPECT_EQ(r.exit_status, 5) << c.name;
    EXPECT_EQ(r.stderr_text,
              "Bootstrap failed: 5: Input/output error\nguest-sim launchctl: " + path + ": " +
                  c.detail + "\n")
        << c.name;
  }
  auto malformed = agent("malformed", "<key>Label</key><key>x</key>\n");
  auto r = run("launchctl bootstrap " + domain() + " " + q(malformed));
  EXPECT_EQ(r.exit_status, 5);
  EXPECT_NE(r.stderr_text.find(": invalid property list: "), std::string::npos) << r.stderr_text;

  auto writable = agent("writable",
                        "<key>Label</key><string>dev.t.w</string><key>ProgramArguments</"
                        "key><array><string>/bin/true</string></array>\n",
                        0666);
  auto w = run("launchctl bootstrap " + domain() + " " + q(writable));
  EXPECT_EQ(w.exit_status, 5);
  EXPECT_NE(w.stderr_text.find("bad ownership/permissions"), std::string::npos) << w.stderr_text;

  auto missing = run("launchctl bootstrap " + domain() + " /nonexistent.plist");
  EXPECT_EQ(missing.exit_status, 2);

  auto good = agent("good",
                    "<key>Label</key><string>dev.t.ok</string><key>ProgramArguments</"
                    "key><array><string>/bin/true</string></array>\n");
  EXPECT_EQ(run("launchctl bootstrap " + domain() + " " + q(good)).exit_status, 0);
  auto twice = run("launchctl bootstrap " + domain() + " " + q(good));
  EXPECT_EQ(twice.exit_status, 5);
  EXPECT_EQ(twice.stderr_text,
            "Bootstrap failed: 5: Input/output error\nguest-sim launchctl: service already loaded: "
            "dev.t.ok\n");
  auto other_user = run("launchctl bootstrap gui/0 " + q(good));
  EXPECT_EQ(other_user.exit_status, 5);
}

TEST_F(GuestSimUserland, KickstartRunsTheJobWithItsEnvironmentAndLdPreload) {
  const std::string home = sim.info().home;
  auto path =
      agent("dev.lume-unlock.echo",
            "<key>Label</key><string>dev.lume-unlock.echo</string>\n"
            "<key>ProgramArguments</key><array><string>/bin/sh</string><string>-c</string>"
            "<string>printf '%s|%s|%s|%s' \"$LD_PRELOAD\" \"${DYLD_INSERT_LIBRARIES-unset}\" "
            "\"$FOO\" \"$1\"; echo oops &gt;&amp;2</string>"
            "<string>sh</string><string>arg one</string></array>\n"
            "<key>EnvironmentVariables</key><dict><key>DYLD_INSERT_LIBRARIES</key><string>/opt/"
            "shim.so</string>"
            "<key>FOO</key><string>bar baz</string></dict>\n"
            "<key>StandardOutPath</key><string>" +
                home +
                "/job.out</string>\n"
                "<key>StandardErrorPath</key><string>" +
                home + "/job.err</string>\n");
  ASSERT_EQ(run("launchctl bootstrap " + domain() + " " + q(path)).exit_status, 0);
  EXPECT_FALSE(fs::exists(home + "/job.out")) << "no RunAtLoad: nothing runs before kickstart";
  auto kick = run("launchctl kickstart -k " + domain() + "/dev.lume-unlock.echo");
  EXPECT_EQ(kick.exit_status, 0) << kick.stderr_text;
  EXPECT_TRUE(wait_for_file(home + "/job.out", "/opt/shim.so|unset|bar baz|arg one"))
      << slurp(home + "/job.out");
  // The loader really got LD_PRELOAD: it complains that /opt/shim.so does not exist.
  EXPECT_TRUE(
      wait_for_file(home + "/job.err",
                    "ERROR: ld.so: object '/opt/shim.so' from LD_PRELOAD cannot be preloaded "
                    "(cannot open shared object file): ignored.\noops\n"))
      << slurp(home + "/job.err");

  // print shows the job; its exit is recorded once the job ends.
  std::string printed;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    printed = run("launchctl print " + domain() + "/dev.lume-unlock.echo").stdout_text;
  } while (printed.find("last exit code = 0") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_NE(printed.find(domain() + "/dev.lume-unlock.echo = {"), std::string::npos) << printed;
  EXPECT_NE(printed.find("\tstate = not running\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("\tlast exit code = 0\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("\t\tDYLD_INSERT_LIBRARIES => /opt/shim.so\n"), std::string::npos)
      << printed;
}

TEST_F(GuestSimUserland, PrintBootoutAndSetenvBehaveLikeLaunchd) {
  auto unknown = run("launchctl print " + domain() + "/dev.nope");
  EXPECT_EQ(unknown.exit_status, 113);
  EXPECT_EQ(unknown.stderr_text,
            "Could not find service \"dev.nope\" in domain for user gui: " + uid + "\n");
  auto kick_unknown = run("launchctl kickstart -k " + domain() + "/dev.nope");
  EXPECT_EQ(kick_unknown.exit_status, 113);

  auto path = agent(
      "dev.t.sleep",
      "<key>Label</key><string>dev.t.sleep</string>"
      "<key>ProgramArguments</key><array><string>/bin/sleep</string><string>300</string></array>"
      "<key>RunAtLoad</key><true/>\n");
  ASSERT_EQ(run("launchctl bootstrap " + domain() + " " + q(path)).exit_status, 0);
  auto printed = run("launchctl print " + domain() + "/dev.t.sleep");
  EXPECT_EQ(printed.exit_status, 0);
  EXPECT_NE(printed.stdout_text.find("\tstate = running\n"), std::string::npos)
      << printed.stdout_text;
  const auto pid_at = printed.stdout_text.find("\tpid = ");
  ASSERT_NE(pid_at, std::string::npos);
  const pid_t first_pid = std::stoi(printed.stdout_text.substr(pid_at + 7));
  EXPECT_TRUE(alive(first_pid));

  // kickstart without -k leaves a running job alone; with -k it restarts it.
  EXPECT_EQ(run("launchctl kickstart " + domain() + "/dev.t.sleep").exit_status, 0);
  EXPECT_NE(run("launchctl print " + domain() + "/dev.t.sleep").stdout_text.find("\truns = 1\n"),
            std::string::npos);
  EXPECT_EQ(run("launchctl kickstart -k " + domain() + "/dev.t.sleep").exit_status, 0);
  auto restarted = run("launchctl print " + domain() + "/dev.t.sleep").stdout_text;
  EXPECT_NE(restarted.find("\truns = 2\n"), std::string::npos) << restarted;
  EXPECT_EQ(restarted.find("\tpid = " + std::to_string(first_pid) + "\n"), std::string::npos);

  auto out = run("launchctl bootout " + domain() + "/dev.t.sleep");
  EXPECT_EQ(out.exit_status, 0) << out.stderr_text;
  EXPECT_EQ(run("launchctl print " + domain() + "/dev.t.sleep").exit_status, 113);
  auto again = run("launchctl bootout " + domain() + "/dev.t.sleep");
  EXPECT_EQ(again.exit_status, 3);
  EXPECT_EQ(again.stderr_text, "Boot-out failed: 3: No such process\n");

  auto setenv_refused = run("launchctl setenv DYLD_INSERT_LIBRARIES /x");
  EXPECT_EQ(setenv_refused.exit_status, 1);
  EXPECT_NE(setenv_refused.stderr_text.find("'launchctl setenv' is refused"), std::string::npos);
}

// Lume's shared directories: guest-sim's stand-in for "/Volumes/My Shared Files" is a folder the
// guest user reads but cannot write (lume-sim fills it).
// launchd spawns a KeepAlive job again when it exits, no sooner than ThrottleInterval after its
// last start, and shows it as "spawn scheduled" meanwhile (docs/sources.md).
TEST_F(GuestSimUserland, AKeepAliveJobIsSpawnedAgainAfterItsThrottleInterval) {
  const std::string home = sim.info().home;
  auto path = agent("dev.t.again",
                    "<key>Label</key><string>dev.t.again</string>"
                    "<key>ProgramArguments</key><array><string>/bin/sh</string><string>-c</string>"
                    "<string>echo run; exit 3</string></array>"
                    "<key>RunAtLoad</key><true/><key>KeepAlive</key><true/>"
                    "<key>ThrottleInterval</key><integer>1</integer>"
                    "<key>StandardOutPath</key><string>" +
                        home + "/again.out</string>\n");
  ASSERT_EQ(run("launchctl bootstrap " + domain() + " " + q(path)).exit_status, 0);
  EXPECT_TRUE(wait_for_file(home + "/again.out", "run\nrun\n")) << slurp(home + "/again.out");
  const std::string printed = run("launchctl print " + domain() + "/dev.t.again").stdout_text;
  EXPECT_NE(printed.find("\tlast exit code = 3\n"), std::string::npos) << printed;
  EXPECT_TRUE(printed.find("\tstate = spawn scheduled\n") != std::string::npos ||
              printed.find("\tstate = running\n") != std::string::npos)
      << printed;
  ASSERT_EQ(run("launchctl bootout " + domain() + "/dev.t.again").exit_status, 0);
  const std::string runs = slurp(home + "/again.out");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(slurp(home + "/again.out"), runs) << "a booted-out job was spawned again";
}

TEST_F(GuestSimUserland, SharedFilesIsTheMountPointTheGuestCannotWrite) {
  EXPECT_EQ(sim.info().shared_files, sim_dir.path() + "/Volumes/My Shared Files");
  EXPECT_TRUE(fs::is_directory(sim.info().shared_files));
  EXPECT_EQ(run("ls -A " + q(sim.info().shared_files)).stdout_text, "") << "empty until a VM runs";
  if (geteuid() == 0) {
    EXPECT_NE(run("touch " + q(sim.info().shared_files + "/x")).exit_status, 0)
        << "the guest user cannot put files where the shares appear";
  }
}

TEST_F(GuestSimUserland, StopLeavesNothingRunning) {
  auto path = agent(
      "dev.t.long",
      "<key>Label</key><string>dev.t.long</string>"
      "<key>ProgramArguments</key><array><string>/bin/sleep</string><string>300</string></array>"
      "<key>RunAtLoad</key><true/>\n");
  ASSERT_EQ(run("launchctl bootstrap " + domain() + " " + q(path)).exit_status, 0);
  auto printed = run("launchctl print " + domain() + "/dev.t.long").stdout_text;
  const auto pid_at = printed.find("\tpid = ");
  ASSERT_NE(pid_at, std::string::npos) << printed;
  const pid_t job = std::stoi(printed.substr(pid_at + 7));
  const pid_t sshd = sim.info().pid;
  const std::string user = sim.info().user;
  session.reset();
  ASSERT_EQ(sim.stop(), 0);
  EXPECT_FALSE(alive(job)) << "the launchctl job survived stop";
  EXPECT_FALSE(alive(sshd)) << "sshd survived stop";
  if (geteuid() == 0) {
    EXPECT_EQ(getpwnam(user.c_str()), nullptr) << "the dedicated user survived stop";
  }
}

} // namespace
} // namespace lume_unlock::guest
