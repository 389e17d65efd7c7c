// `lume-unlock allow …` and `lume-unlock exec …` in-process against guest-sim and lume-sim.
#include "integration/apply/apply_fixture.hpp"
#include "integration/apply/cli_fixture.hpp"
#include "support/file_io.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace lume_unlock::cli {
namespace {

namespace fs = std::filesystem;

class CliAllow : public test::CliGuestTest {
protected:
  test::TempDir work{"lume-unlock-bundle"};
};

TEST_F(CliAllow, WithoutTheShimAllowSaysSoAndPointsAtCreate) {
  auto r = run({"allow", "list", "vm1"});
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_NE(r.err.find("the shim is not installed in the guest"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: install it with 'lume-unlock create vm1'"), std::string::npos)
      << r.err;
}

TEST_F(CliAllow, AnEnablementFileOverTheLimitIsRefusedWithoutReadingIt) {
  const auto facts = install(test::stand_in_bundle(work.path(), "not really a shim"));
  const std::string path = facts.home + "/Library/Application Support/LumeUnlock/enablement.json";
  ASSERT_TRUE(util::write_file_atomic(path, std::string((1u << 20) + 1, ' ')).ok());
  auto r = run({"allow", "list", "vm1"});
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_NE(r.err.find("its enablement file is 1048577 bytes, more than the 1 MiB lume-unlock "
                       "reads"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("hint: lume-unlock never writes such a file"), std::string::npos) << r.err;
}

TEST_F(CliAllow, AddListExecAndRemoveAnExecOnlyEntry) {
  const auto facts = install(test::stand_in_bundle(work.path(), "not really a shim"));
  const std::string script = facts.home + "/show env.sh";
  ASSERT_TRUE(util::write_file_atomic(
                  script,
                  "#!/bin/sh\n"
                  "printf '[%s]\\n' \"$@\"\n"
                  "printf 'family=%s guard=%s odd=%s\\n' "
                  "\"$LUME_METAL_APPLE_FAMILY_MAX\" \"$LUME_UNLOCK_ENABLEMENT\" \"$ODD\"\n"
                  "case $LD_PRELOAD:$LD_LIBRARY_PATH in liblume-unlock-shim.so:*/shim/*) echo "
                  "injected ;; esac\n"
                  "exit 3\n",
                  0755)
                  .ok());

  auto added = run({"allow",
                    "add",
                    "vm1",
                    "show-env",
                    "--program",
                    script,
                    "--arg",
                    "a b",
                    "--arg=--flag",
                    "--env",
                    "ODD=$(x) & 'y'",
                    "--no-agent"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  const std::string support = facts.home + "/Library/Application Support/LumeUnlock";
  EXPECT_EQ(added.out,
            "checked: program '" + script +
                "': injectable (the program is a script (#!); the linux-x86_64 shim is preloaded "
                "into whatever it runs)\nwrite " +
                support + "/enabled-executables\nwrite " + support + "/enablement.json\n");

  auto again = run({"allow",
                    "add",
                    "vm1",
                    "show-env",
                    "--program",
                    script,
                    "--arg",
                    "a b",
                    "--arg=--flag",
                    "--env",
                    "ODD=$(x) & 'y'",
                    "--no-agent"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "nothing to change: the enablement list of VM 'vm1' is already applied\n");

  auto listed = run({"allow", "list", "vm1"}, {}, {"--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  auto document = nlohmann::json::parse(listed.out);
  ASSERT_EQ(document["enablement"].size(), 1u);
  EXPECT_EQ(document["enablement"][0]["program"], script);
  EXPECT_EQ(document["enablement"][0]["args"], nlohmann::json({"a b", "--flag"}));
  EXPECT_EQ(document["shim"]["platform"], "linux-x86_64");

  auto ran = run({"exec", "vm1", "show-env"}, {"--", "extra word"});
  EXPECT_EQ(ran.exit_code, 3) << ran.err;
  EXPECT_EQ(ran.out,
            "[a b]\n[--flag]\n[extra word]\nfamily=1009 guard=" + support +
                "/enabled-executables odd=$(x) & 'y'\ninjected\n");

  auto unknown = run({"exec", "vm1", "show-evn"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err,
            "lume-unlock: error: exec 'show-evn': it is not on the enablement list of VM 'vm1' (" +
                support + "/enablement.json)\nhint: did you mean 'show-env'?\n");

  auto wrong = run({"allow", "remove", "vm1", "shwo-env"});
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_EQ(wrong.err,
            "lume-unlock: error: allow remove: entry 'shwo-env' is not on the "
            "enablement list of VM 'vm1'\nhint: did you mean 'show-env'?\n");

  auto removed = run({"allow", "remove", "vm1", "show-env"});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  auto after = run({"exec", "vm1", "show-env"});
  EXPECT_EQ(after.exit_code, 2);
}

TEST_F(CliAllow, DryRunPrintsThePlanAndChangesNothing) {
  const auto facts = install(test::stand_in_bundle(work.path(), "not really a shim"));
  const std::string support = facts.home + "/Library/Application Support/LumeUnlock";
  auto r = run(
      {"allow", "add", "vm1", "sleeper", "--program", "/bin/sleep", "--arg", "300", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "checked: program '/bin/sleep': injectable (the program is an ELF file; the "
            "linux-x86_64 shim is preloaded into whatever it runs)\n"
            "allow add 'sleeper' in VM 'vm1' would run (dry run, nothing changed):\n"
            "  [to do]    add: agent 'sleeper' (dev.lume-unlock.sleeper)\n"
            "  [to do]    write: " +
                facts.home + "/Library/LaunchAgents/dev.lume-unlock.sleeper.plist\n" +
                "  [to do]    write: " + support +
                "/enabled-executables\n  [to do]    write: " + support + "/enablement.json\n");
  // With --json the same shape as every plan's dry run, beside the program checks.
  auto planned = run(
      {"allow", "add", "vm1", "sleeper", "--program", "/bin/sleep", "--dry-run"}, {}, {"--json"});
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  const auto plan = nlohmann::json::parse(planned.out);
  EXPECT_EQ(plan["plan"], "allow add");
  EXPECT_EQ(plan["dry_run"], true);
  EXPECT_EQ(plan["no_op"], false);
  EXPECT_EQ(plan["vm"], "vm1");
  ASSERT_EQ(plan["steps"].size(), 4u) << plan;
  EXPECT_EQ(plan["steps"][0],
            nlohmann::json({{"id", "add"},
                            {"description", "agent 'sleeper' (dev.lume-unlock.sleeper)"},
                            {"in_place", false},
                            {"observed", ""}}));
  EXPECT_EQ(plan["programs"][0]["verdict"], "injectable");
  EXPECT_FALSE(fs::exists(support + "/enablement.json"));
  EXPECT_FALSE(fs::exists(facts.home + "/Library/LaunchAgents/dev.lume-unlock.sleeper.plist"));
  auto ghost = run({"allow", "add", "vm1", "ghost", "--program", "/opt/ghost", "--dry-run"});
  EXPECT_EQ(ghost.exit_code, 2) << "the prechecks run in a dry run too";
}

TEST_F(CliAllow, AddShowsEachProgramsVerdictAndRefusesOneTheShimCannotEnter) {
  const auto facts = install(test::stand_in_bundle(work.path(), "not really a shim"));
  // A real arm64 Mach-O program in the guest: guest-sim's shim is linux-x86_64.
  const std::string macho = facts.home + "/Applications/tool";
  fs::create_directories(facts.home + "/Applications");
  fs::copy_file(std::string(LUME_UNLOCK_MACHO_FIXTURES) + "/arm64", macho);
  fs::permissions(macho, fs::perms(0755));
  auto refused = run({"allow", "add", "vm1", "tool", "--program", macho, "--no-agent"});
  EXPECT_EQ(refused.exit_code, 6) << refused.err;
  EXPECT_EQ(refused.err,
            "lume-unlock: error: allow add 'tool' in VM 'vm1': enablement entry 'tool': program '" +
                macho +
                "' cannot be unlocked (wrong-architecture): the program is arm64 and the "
                "linux-x86_64 shim has only x86_64\nhint: use a build of the program for "
                "x86_64\n");
  EXPECT_FALSE(fs::exists(facts.home + "/Library/Application Support/LumeUnlock/enablement.json"));

  auto added = run(
      {"allow", "add", "vm1", "sleeper", "--program", "/bin/sleep", "--no-agent"}, {}, {"--json"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  const auto document = nlohmann::json::parse(added.out);
  ASSERT_EQ(document["programs"].size(), 1u);
  EXPECT_EQ(document["programs"][0]["entry"], "sleeper");
  EXPECT_EQ(document["programs"][0]["program"], "/bin/sleep");
  EXPECT_EQ(document["programs"][0]["verdict"], "injectable");
  EXPECT_EQ(document["programs"][0]["archs"], "");
}

// llama.cpp's arm64 releases from b9428 on are built for macOS 26 and do not load on macOS 15: a
// program whose minimum macOS is above the guest's is refused before anything is enabled.
TEST_F(CliAllow, AProgramBuiltForANewerMacOSThanTheGuestsIsRefusedWithNothingEnabled) {
  const auto facts = install(test::stand_in_bundle(work.path(), "not really a shim"));
  ASSERT_TRUE(util::write_file_atomic(sim.dir() + "/macos-version", "15.7.8 24G824\n").ok());
  // An x86_64 Mach-O linked for macOS 26.0: the slice guest-sim's linux-x86_64 shim has.
  const std::string program = facts.home + "/Applications/llama-server";
  fs::create_directories(facts.home + "/Applications");
  fs::copy_file(std::string(LUME_UNLOCK_MACHO_FIXTURES) + "/x86_64-minos-26", program);
  fs::permissions(program, fs::perms(0755));
  const std::string support = facts.home + "/Library/Application Support/LumeUnlock";
  const std::string agents = facts.home + "/Library/LaunchAgents";
  auto before = run({"allow", "add", "vm1", "sleeper", "--program", "/bin/sleep", "--no-agent"});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  const std::string guard = test::slurp(support + "/enabled-executables");
  const std::string list = test::slurp(support + "/enablement.json");

  for (const bool agent : {true, false}) {
    std::vector<std::string> add = {"allow", "add", "vm1", "server", "--program", program};
    if (!agent) {
      add.push_back("--no-agent");
    }
    auto refused = run(add);
    EXPECT_EQ(refused.exit_code, 6) << refused.err;
    EXPECT_EQ(refused.err,
              "lume-unlock: error: allow add 'server' in VM 'vm1': enablement entry 'server': "
              "program '" +
                  program +
                  "' cannot be unlocked (needs-newer-macos): its x86_64 slice is built for macOS "
                  "26.0 or later and the guest runs macOS 15.7.8, so dyld refuses to load it\n"
                  "hint: use a newer guest image (macOS 26.0 or later), or a build of the "
                  "program for macOS 15.7.8\n");
    EXPECT_EQ(test::slurp(support + "/enabled-executables"), guard);
    EXPECT_EQ(test::slurp(support + "/enablement.json"), list);
    EXPECT_FALSE(fs::exists(agents + "/dev.lume-unlock.server.plist"));
  }
  // The same program on a macOS 26 guest loads.
  fs::remove(sim.dir() + "/macos-version");
  auto added = run({"allow", "add", "vm1", "server", "--program", program, "--no-agent"});
  EXPECT_EQ(added.exit_code, 0) << added.err;
}

// guest-sim's Homebrew prefix: bin/hello is a relative link into the Cellar, as 'brew link'
// makes it. The shim compares the executable's realpath, so the guard must list the Cellar path.
TEST_F(CliAllow, ALinkedProgramIsGuardedByItsRealPathAndListedWithBoth) {
  const auto facts = install(test::stand_in_bundle(work.path(), "not really a shim"));
  const std::string link = sim.dir() + "/opt/homebrew/bin/hello";
  const std::string real = fs::canonical(link).string();
  ASSERT_NE(real, link);
  const std::string support = facts.home + "/Library/Application Support/LumeUnlock";

  auto added = run({"allow", "add", "vm1", "hello", "--program", link, "--arg", "x", "--no-agent"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  const std::string guard = test::slurp(support + "/enabled-executables");
  EXPECT_NE(guard.find("\n" + real + "\n"), std::string::npos) << guard;
  EXPECT_EQ(guard.find(link), std::string::npos) << "the guard lists the link itself:\n" << guard;

  auto listed = run({"allow", "list", "vm1"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("hello  " + link +
                            " 'x'  (exec only; from allow)\n"
                            "    real path: " +
                            real + "\n"),
            std::string::npos)
      << listed.out;
  auto json = run({"allow", "list", "vm1"}, {}, {"--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto entry = nlohmann::json::parse(json.out)["enablement"].at(0);
  EXPECT_EQ(entry["program"], link);
  EXPECT_EQ(entry["resolved_program"], real);

  // exec runs the program as written: through the link.
  auto ran = run({"exec", "vm1", "hello"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out, "hello 1.0 x\n");

  auto missing = run({"allow", "add", "vm1", "gone", "--program", sim.dir() + "/tmp/gone"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("does not exist in the guest"), std::string::npos) << missing.err;
  fs::create_symlink("nowhere", sim.dir() + "/tmp/gone");
  auto broken = run({"allow", "add", "vm1", "gone", "--program", sim.dir() + "/tmp/gone"});
  EXPECT_EQ(broken.exit_code, 2) << broken.err;
  EXPECT_NE(broken.err.find("is a symbolic link to a file that does not exist in the guest"),
            std::string::npos)
      << broken.err;
}

// `brew upgrade` re-points bin/hello at a new Cellar version: the guard still lists the old
// real path, so status drifts (exit 6) and says to apply the list again, which fixes it.
TEST_F(CliAllow, StatusDriftsWhenALinkNowPointsElsewhereAndAllowAgainFixesIt) {
  const auto facts = install(test::stand_in_bundle(work.path(), "not really a shim"));
  const std::string brew = sim.dir() + "/opt/homebrew";
  const std::vector<std::string> add = {
      "allow", "add", "vm1", "hello", "--program", brew + "/bin/hello", "--no-agent"};
  ASSERT_EQ(run(add).exit_code, 0);
  auto clean = run({"status", "vm1"});
  ASSERT_EQ(clean.exit_code, 0) << clean.out << clean.err;

  auto upgraded =
      run({"ssh", "vm1"},
          {"--",
           "sh",
           "-c",
           "cd \"$1\" && mkdir -p Cellar/hello/1.1/bin && cp Cellar/hello/1.0/bin/hello "
           "Cellar/hello/1.1/bin/ && ln -sfn ../Cellar/hello/1.1/bin/hello bin/hello",
           "sh",
           brew});
  ASSERT_EQ(upgraded.exit_code, 0) << upgraded.err;
  const std::string old_real = fs::canonical(brew + "/Cellar/hello/1.0/bin/hello").string();
  const std::string new_real = fs::canonical(brew + "/bin/hello").string();
  ASSERT_NE(old_real, new_real);

  auto drift = run({"status", "vm1"});
  EXPECT_EQ(drift.exit_code, 6) << drift.out << drift.err;
  EXPECT_NE(drift.out.find("DRIFT  program of 'hello' (" + brew +
                           "/bin/hello) resolves to: expected " + old_real + ", found " + new_real),
            std::string::npos)
      << drift.out;
  EXPECT_NE(drift.err.find("run 'lume-unlock allow add vm1 hello --program " + brew + "/bin/hello"),
            std::string::npos)
      << drift.err;
  auto json = run({"status", "vm1"}, {}, {"--json"});
  EXPECT_EQ(json.exit_code, 6);
  EXPECT_EQ(nlohmann::json::parse(json.out)["drift"], true) << json.out;

  auto again = run(add);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const std::string support = facts.home + "/Library/Application Support/LumeUnlock";
  EXPECT_NE(again.out.find("rewrite " + support + "/enabled-executables"), std::string::npos)
      << again.out;
  EXPECT_NE(test::slurp(support + "/enabled-executables").find("\n" + new_real + "\n"),
            std::string::npos);
  auto fixed = run({"status", "vm1"});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
}

/// N from the last "SSH commands: N, Lume requests: M" line of a --verbose run's stderr, or -1.
long remote_commands(const std::string& err) {
  const std::string key = "debug: SSH commands: ";
  const auto at = err.rfind(key);
  return at == std::string::npos ? -1 : std::stol(err.substr(at + key.size()));
}

TEST_F(CliAllow, WholeCommandsTakeAHandfulOfRoundTrips) {
  const auto facts = install(test::stand_in_bundle(work.path(), "not really a shim"));
  auto add = run({"allow", "add", "vm1", "sleeper", "--program", "/bin/sleep", "--arg", "300"},
                 {},
                 {"--verbose"});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  auto again = run({"allow", "add", "vm1", "sleeper", "--program", "/bin/sleep", "--arg", "300"},
                   {},
                   {"--verbose"});
  auto remove = run({"allow", "remove", "vm1", "sleeper"}, {}, {"--verbose"});
  ASSERT_EQ(remove.exit_code, 0) << remove.err;
  std::cout << "allow add (new agent): " << remote_commands(add.err)
            << " commands; again (no-op): " << remote_commands(again.err)
            << "; allow remove: " << remote_commands(remove.err) << "\n";
  // Plus one each for the guest's provenance record, which allow now keeps up to date, and one
  // that resolves every program's real path (a link may have moved since the last apply).
  EXPECT_LE(remote_commands(add.err), 12);
  EXPECT_EQ(remote_commands(again.err), 3) << "facts, observe and resolve only";
  EXPECT_LE(remote_commands(remove.err), 10);
}

TEST_F(CliAllow, MissingProgramIsRefusedWithUsageExitCode) {
  install(test::stand_in_bundle(work.path(), "not really a shim"));
  auto r = run({"allow", "add", "vm1", "ghost", "--program", "/opt/ghost/bin/ghost"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "lume-unlock: error: allow add 'ghost' in VM 'vm1': enablement entry 'ghost': "
            "program '/opt/ghost/bin/ghost' does not exist in the guest\n"
            "hint: install the program first, or give its absolute path with --program\n");
}

} // namespace
} // namespace lume_unlock::cli
