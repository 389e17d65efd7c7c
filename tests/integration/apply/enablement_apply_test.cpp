// The enablement executor against guest-sim: observe, prechecks, apply, rollback, convergence.
#include "enablement/enablement_list.hpp"
#include "enablement/enablement_plan.hpp"
#include "integration/apply/apply_fixture.hpp"
#include "support/file_io.hpp"
#include "unit/macho/fixture.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace lume_unlock::apply {
namespace {

namespace fs = std::filesystem;
using enablement::EnablementList;
using test::slurp;

class EnablementApply : public test::ApplyTest {
protected:
  /// Expects the guest to hold exactly `list`: enablement.json, guard file, one plist per agent
  /// (and no other of ours), every agent loaded.
  /// The guard lists every program's real path, found here on the host (guest-sim shares its
  /// file system): /bin is a link to usr/bin on Debian, as /tmp is to private/tmp on a Mac.
  void expect_applied(const EnablementList& list) {
    auto observed = view();
    EnablementList written;
    EnablementList resolved = list;
    for (const auto& entry : observed.list.entries) {
      written.entries.push_back(enablement::as_written(entry));
    }
    for (auto& entry : resolved.entries) {
      entry.resolved_program = fs::canonical(entry.program).string();
    }
    EXPECT_EQ(written, list);
    EXPECT_EQ(observed.list, resolved) << "enablement.json records each real path";
    EXPECT_EQ(observed.observed.state.guard_file, enablement::render_guard_file(resolved));
    std::set<std::string> plists;
    for (const auto& entry : list.entries) {
      if (entry.agent) {
        plists.insert("dev.lume-unlock." + entry.name + ".plist");
        EXPECT_TRUE(observed.observed.state.loaded_labels->count("dev.lume-unlock." + entry.name))
            << entry.name;
      }
    }
    std::set<std::string> present;
    for (const auto& [name, bytes] : observed.observed.state.agent_plists) {
      present.insert(name);
    }
    EXPECT_EQ(present, plists);
    EXPECT_FALSE(fs::exists(support() + "/staging")) << "staging left behind";
  }
};

TEST_F(EnablementApply, OneAgentIsWrittenLoadedAndASecondApplyRunsNoCommand) {
  EnablementList list{{agent("one")}};
  auto first = apply(list);
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_TRUE(first.value().changed);
  std::cout << "apply of 1 entry: " << first.value().commands << " commands\n";
  EXPECT_LE(first.value().commands, 10u);
  expect_applied(list);
  EXPECT_TRUE(loaded("one"));

  auto again = apply(list);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_FALSE(again.value().changed);
  EXPECT_EQ(again.value().commands, 1u) << "only the one that resolves the programs anew";
}

TEST_F(EnablementApply, HundredEntriesTakeAHandfulOfCommands) {
  EnablementList list;
  for (int i = 0; i < 100; ++i) {
    auto entry = agent("app-" + std::to_string(i), "/bin/true", {});
    entry.keep_alive = false;
    list.entries.push_back(entry);
  }
  auto report = apply(list);
  ASSERT_TRUE(report.ok()) << report.error().message();
  std::cout << "apply of 100 entries: " << report.value().commands << " commands\n";
  EXPECT_LE(report.value().commands, 11u);
  expect_applied(list);

  // Change every entry: boot out, rewrite, bootstrap 100 agents, still a handful of commands.
  for (auto& entry : list.entries) {
    entry.args = {"changed"};
  }
  auto changed = apply(list);
  ASSERT_TRUE(changed.ok()) << changed.error().message();
  std::cout << "re-apply of 100 changed entries: " << changed.value().commands << " commands\n";
  EXPECT_LE(changed.value().commands, 11u);
  expect_applied(list);
}

TEST_F(EnablementApply, RemovingAnEntryBootsOutAndDeletesOnlyIt) {
  EnablementList list{{agent("keep"), agent("drop")}};
  ASSERT_TRUE(apply(list).ok());
  ASSERT_TRUE(loaded("drop"));
  EnablementList smaller{{agent("keep")}};
  auto report = apply(smaller);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_FALSE(loaded("drop"));
  EXPECT_FALSE(fs::exists(plist("drop")));
  EXPECT_TRUE(loaded("keep"));
  expect_applied(smaller);
}

TEST_F(EnablementApply, ArgumentsAndEnvironmentWithShellSyntaxArriveVerbatim) {
  const std::string script = facts.home + "/echo args.sh";
  ASSERT_TRUE(
      util::write_file_atomic(
          script, "#!/bin/sh\nprintf '[%s]\\n' \"$@\"\nprintf 'env=[%s]\\n' \"$ODD\"\n", 0755)
          .ok());
  const std::vector<std::string> args = {"two words",
                                         "it's \"quoted\"",
                                         "a & b",
                                         "<in >out",
                                         "$(touch /tmp/pwned)",
                                         "`id`",
                                         "back\\slash",
                                         ""};
  auto entry = agent("odd", script, args);
  entry.keep_alive = false;
  entry.env = {{"ODD", "$HOME & 'x' <y> $(z)"}};
  auto report = apply(EnablementList{{entry}});
  ASSERT_TRUE(report.ok()) << report.error().message();
  const std::string log = facts.home + "/Library/Logs/LumeUnlock/odd.stdout.log";
  std::string expected;
  for (const std::string& arg : args) {
    expected += "[" + arg + "]\n";
  }
  expected += "env=[$HOME & 'x' <y> $(z)]\n";
  for (int i = 0; i < 100 && slurp(log) != expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(slurp(log), expected);
}

TEST_F(EnablementApply, MissingProgramIsAClearErrorAndChangesNothing) {
  ASSERT_TRUE(apply(EnablementList{{agent("one")}}).ok());
  auto report = apply(EnablementList{{agent("one"), agent("ghost", "/opt/no such/ghost")}});
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().category(), ErrorCategory::usage);
  EXPECT_EQ(report.error().message(),
            "enablement entry 'ghost': program '/opt/no such/ghost' does not exist in the guest");
  expect_applied(EnablementList{{agent("one")}});
}

TEST_F(EnablementApply, ProgramsAreJudgedFromTheirMachOHeadersReadOverSftp) {
  // Real Mach-O programs at their paths in the guest, as a user installs them. guest-sim's lipo
  // and codesign are the stubs of a guest without Xcode's tools, so only SFTP reads can judge.
  const std::string apps = facts.home + "/Applications/";
  for (const char* name : {"arm64", "fat-arm64-x86_64", "arm64-runtime", "arm64e"}) {
    ASSERT_TRUE(session->upload(test::macho_fixture(name), apps + name, 0755).ok()) << name;
  }
  InstalledShim darwin;
  darwin.platform = "darwin-arm64";
  auto checks = precheck_entries(
      *session, {agent("thin", apps + "arm64"), agent("fat", apps + "fat-arm64-x86_64")}, darwin);
  ASSERT_TRUE(checks.ok()) << checks.error().message();
  ASSERT_EQ(checks.value().size(), 2u);
  EXPECT_EQ(checks.value()[0].verdict.archs, "arm64");
  EXPECT_EQ(checks.value()[1].verdict.archs, "x86_64 arm64");
  EXPECT_FALSE(checks.value()[1].verdict.refused());

  auto hardened = precheck_entries(*session, {agent("hard", apps + "arm64-runtime")}, darwin);
  ASSERT_FALSE(hardened.ok());
  EXPECT_EQ(hardened.error().category(), ErrorCategory::verification);
  EXPECT_NE(hardened.error().message().find("(hardened-runtime)"), std::string::npos)
      << hardened.error().message();

  // Through the whole apply (the installed shim is guest-sim's linux-x86_64): an arm64e program
  // is refused and nothing changes.
  ASSERT_TRUE(apply(EnablementList{{agent("one")}}).ok());
  auto wrong = apply(EnablementList{{agent("one"), agent("e", apps + "arm64e")}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().category(), ErrorCategory::verification);
  EXPECT_EQ(wrong.error().message(),
            "enablement entry 'e': program '" + apps +
                "arm64e' cannot be unlocked (needs-arm64e-slice): the program is arm64e and the "
                "linux-x86_64 shim has only x86_64");
  EXPECT_EQ(
      wrong.error().hint(),
      "the shim bundle has no arm64e slice (ld64.lld cannot link arm64e; see shim/README.md), so "
      "only an arm64 build of this program can be unlocked");
  expect_applied(EnablementList{{agent("one")}});
}

TEST_F(EnablementApply, ConnectionDroppedBetweenStepsThenRerunConverges) {
  EnablementList before{{agent("a"), agent("b")}};
  ASSERT_TRUE(apply(before).ok());
  EnablementList after{{agent("a", "/bin/sleep", {"301"}), agent("c")}};
  // Count the commands of a full apply of `after`, then drop the connection at each point in
  // turn; after every drop a fresh session converges.
  for (std::uint64_t drop_after = 2; drop_after <= 8; ++drop_after) {
    SCOPED_TRACE("dropped after command " + std::to_string(drop_after));
    ASSERT_TRUE(apply(before).ok());
    test::UnreliableSession unreliable(connect());
    unreliable.drop_at_command = drop_after;
    auto interrupted = apply(after, &unreliable);
    EXPECT_FALSE(interrupted.ok());
    if (!interrupted.ok()) {
      std::cout << "interrupted: " << interrupted.error().message() << "\n";
    }
    auto rerun = apply(after);
    ASSERT_TRUE(rerun.ok()) << rerun.error().message();
    expect_applied(after);
    EXPECT_FALSE(loaded("b")) << launchd_record("b");
  }
}

TEST_F(EnablementApply, BootstrapIsRetriedWhileLaunchdAnswersErrors5And37) {
  // launchd refuses a bootstrap for a moment after a bootout of the same label (5) or while it
  // still sets the job up (37): put a launchctl in front of guest-sim's that answers 5, then 37,
  // then hands over.
  const std::string bin = sim.dir() + "/bin";
  fs::rename(bin + "/launchctl", bin + "/launchctl.real");
  ASSERT_TRUE(
      util::write_file_atomic(
          bin + "/launchctl",
          "#!/bin/sh\n"
          "count=\"$HOME/.refusals\"\n"
          "if [ \"$1\" = bootstrap ]; then\n"
          "  n=$(cat \"$count\" 2>/dev/null || echo 0)\n"
          "  if [ \"$n\" -lt 2 ]; then echo $((n + 1)) > \"$count\"; "
          "if [ \"$n\" = 0 ]; then echo 'Bootstrap failed: 5: Input/output error' >&2; exit 5; fi\n"
          "  echo 'Bootstrap failed: 37: Operation already in progress' >&2; "
          "exit 37; fi\n"
          "fi\n"
          "exec \"$(dirname \"$0\")/launchctl.real\" \"$@\"\n",
          0755)
          .ok());
  EnablementList list{{agent("one")}};
  auto report = apply(list);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_EQ(slurp(facts.home + "/.refusals"), "2\n");
  expect_applied(list);
}

TEST_F(EnablementApply, NoGuiLoginIsAGuestErrorBeforeAnythingChanges) {
  // guest-sim's launchctl has no gui/<uid> domain while this marker exists (no user logged in).
  guest_sh("touch \"$GUEST_SIM_LAUNCHD_DIR/no-gui-login\"");
  auto report = apply(EnablementList{{agent("one")}});
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().category(), ErrorCategory::guest);
  EXPECT_NE(report.error().message().find("no user is logged in to the guest's GUI"),
            std::string::npos)
      << report.error().message();
  EXPECT_NE(report.error().hint().find("automatic login"), std::string::npos);
  EXPECT_FALSE(fs::exists(facts.home + "/Library/LaunchAgents/dev.lume-unlock.one.plist"));
  // Once a user is logged in, the same apply goes through.
  guest_sh("rm \"$GUEST_SIM_LAUNCHD_DIR/no-gui-login\"");
  auto retried = apply(EnablementList{{agent("one")}});
  ASSERT_TRUE(retried.ok()) << retried.error().message();
  expect_applied(EnablementList{{agent("one")}});
}

TEST_F(EnablementApply, ShimNotInstalledPointsAtCreate) {
  guest_sh("rm -rf '" + support() + "/shim'");
  auto report = apply(EnablementList{{agent("one")}});
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().message(),
            "enablement list of VM 'vm1': the shim is not installed in the guest (no " +
                installed_shim_record_path(facts.home) + ")");
  EXPECT_EQ(report.error().hint(), "install it with 'lume-unlock create vm1'");
}

} // namespace
} // namespace lume_unlock::apply
