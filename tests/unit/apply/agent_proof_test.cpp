// The proof that a running agent is unlocked: launchctl print's lines, the judgement of what the
// guest reported (mapped, log line, neither), and the child rule in force.
#include "apply/agent_proof.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace lume_unlock::apply {
namespace {

// The shape of `launchctl print gui/<uid>/<label>` on macOS (docs/sources.md): top-level keys one
// tab deep, nested blocks deeper (an endpoint's own "state = active" among them).
const std::string k_running =
    "gui/501/dev.lume-unlock.server = {\n"
    "\tactive count = 1\n"
    "\tpath = /Users/lume/Library/LaunchAgents/dev.lume-unlock.server.plist\n"
    "\ttype = LaunchAgent\n"
    "\tstate = running\n"
    "\tprogram = /opt/llama/llama-server\n"
    "\tendpoints = {\n"
    "\t\t\"x\" = {\n"
    "\t\t\tstate = active\n"
    "\t\t}\n"
    "\t}\n"
    "\truns = 2\n"
    "\tpid = 4242\n"
    "\tlast exit code = 78: EX_CONFIG\n"
    "\tjob state = running\n"
    "}\n";

const std::string k_suffix = "/shim/" + std::string(64, 'a') + "/liblume-unlock-shim.dylib";

AgentExpectation expectation() {
  return {k_suffix,
          "llama-server",
          "DYLD_INSERT_LIBRARIES",
          "/Users/lume/Library/Logs/LumeUnlock/server.stderr.log"};
}

enablement::EnablementEntry agent_entry(bool keep_alive = true) {
  enablement::EnablementEntry entry;
  entry.name = "server";
  entry.program = "/opt/llama/llama-server";
  entry.keep_alive = keep_alive;
  return entry;
}

AgentObservation running(const std::string& lsof_lines, int lsof_status = 0) {
  AgentObservation seen;
  seen.entry = "server";
  seen.print_status = 0;
  seen.print = k_running;
  seen.lsof_status = lsof_status;
  seen.lsof_lines = lsof_lines;
  return seen;
}

const std::string k_mapped_lines =
    "p4242\nn/Users/lume/Library/Application Support/LumeUnlock" + k_suffix + "\n";

TEST(LaunchdJob, ReadsTheTopLevelLinesOnly) {
  const LaunchdJob job = parse_launchd_job(k_running);
  EXPECT_EQ(job.state, "running");
  EXPECT_EQ(job.pid, 4242);
  EXPECT_EQ(job.last_exit, "78: EX_CONFIG");
  const LaunchdJob stopped =
      parse_launchd_job("x = {\n\tstate = not running\n\tlast exit code = (never exited)\n}\n");
  EXPECT_EQ(stopped.state, "not running");
  EXPECT_FALSE(stopped.pid);
  EXPECT_EQ(stopped.last_exit, "(never exited)");
}

TEST(AgentProof, TheShimMappedInTheProcessIsProof) {
  const AgentProof proof = judge_agent(agent_entry(), expectation(), running(k_mapped_lines));
  EXPECT_FALSE(proof.problem) << *proof.problem;
  EXPECT_EQ(proof.proof, ShimProof::mapped);
  EXPECT_EQ(proof.mapped, true);
  EXPECT_EQ(describe(proof), "agent running (pid 4242), the shim is mapped in it (lsof)");
}

TEST(AgentProof, AProcessLsofListsWithoutTheShimFailsWhateverTheLogSays) {
  AgentObservation seen = running("p4242\n");
  seen.shim_line = "[lume-unlock-shim] enabled for llama-server (appleFamilyMax=1009 "
                   "maxThreadgroupMemory=65536)";
  const AgentProof proof = judge_agent(agent_entry(), expectation(), seen);
  ASSERT_TRUE(proof.problem);
  EXPECT_NE(proof.problem->find("agent 'server' (pid 4242) runs without the shim"),
            std::string::npos)
      << *proof.problem;
  EXPECT_NE(proof.problem->find("DYLD_INSERT_LIBRARIES"), std::string::npos);
  EXPECT_EQ(describe(proof), "agent running (pid 4242), WITHOUT the shim");
  // Another file of the same name elsewhere is not the installed shim.
  const AgentProof other = judge_agent(
      agent_entry(), expectation(), running("p4242\nn/tmp/liblume-unlock-shim.dylib\n"));
  EXPECT_TRUE(other.problem);
}

TEST(AgentProof, WithoutLsofTheShimsLineForTheProcessIsProof) {
  AgentObservation seen = running("");
  seen.lsof_status.reset();
  seen.lsof_present = false;
  seen.shim_line = "2026-03-02 10:00:01.000 llama-server[900:1000] [lume-unlock-shim] enabled for "
                   "llama-server (appleFamilyMax=1009 maxThreadgroupMemory=65536)\n";
  const AgentProof proof = judge_agent(agent_entry(), expectation(), seen);
  EXPECT_FALSE(proof.problem) << *proof.problem;
  EXPECT_EQ(proof.proof, ShimProof::log_line);
  EXPECT_FALSE(proof.mapped);
  EXPECT_EQ(proof.lsof_note, "lsof is not installed in the guest");

  // A line for another process, or none at all, proves nothing.
  seen.shim_line = "[lume-unlock-shim] enabled for llama-bench (appleFamilyMax=1009 "
                   "maxThreadgroupMemory=65536)";
  const AgentProof other = judge_agent(agent_entry(), expectation(), seen);
  ASSERT_TRUE(other.problem);
  EXPECT_NE(other.problem->find("nothing shows the shim in it: lsof is not installed"),
            std::string::npos)
      << *other.problem;
}

TEST(AgentProof, AFailedLsofIsNamedAndTheLogDecides) {
  const AgentProof proof =
      judge_agent(agent_entry(), expectation(), running("lsof: WARNING: can't stat()\n", 1));
  ASSERT_TRUE(proof.problem);
  EXPECT_NE(proof.problem->find("'lsof -p 4242' failed (exit 1): lsof: WARNING: can't stat()"),
            std::string::npos)
      << *proof.problem;
  EXPECT_NE(proof.problem->find("has no '[lume-unlock-shim] enabled for llama-server (…' line"),
            std::string::npos)
      << *proof.problem;
}

TEST(AgentProof, TheShimsNotEnabledLineFailsEvenWhenMapped) {
  AgentObservation seen = running(k_mapped_lines);
  seen.shim_line = "[lume-unlock-shim] not enabled for llama-server: private_init_missing";
  const AgentProof proof = judge_agent(agent_entry(), expectation(), seen);
  ASSERT_TRUE(proof.problem);
  EXPECT_NE(proof.problem->find("private_init_missing"), std::string::npos) << *proof.problem;
}

TEST(AgentProof, AnAgentNotRunningFailsOnlyWhenKeptAlive) {
  AgentObservation seen;
  seen.entry = "server";
  seen.print_status = 0;
  seen.print = "x = {\n\tstate = spawn scheduled\n\tlast exit code = 1\n}\n";
  const AgentProof kept = judge_agent(agent_entry(true), expectation(), seen);
  ASSERT_TRUE(kept.problem);
  EXPECT_NE(kept.problem->find("agent 'server' is not running (state 'spawn scheduled', last exit "
                               "code 1) although launchd keeps it alive"),
            std::string::npos)
      << *kept.problem;
  const AgentProof once = judge_agent(agent_entry(false), expectation(), seen);
  EXPECT_FALSE(once.problem);
  EXPECT_EQ(describe(once),
            "agent not running (state 'spawn scheduled', last exit code 1), not kept alive: "
            "nothing to check");
}

TEST(AgentProof, AnAgentLaunchdDoesNotKnowFails) {
  AgentObservation seen;
  seen.entry = "server";
  seen.print_status = 113;
  seen.print = "Could not find service \"dev.lume-unlock.server\" in domain for user gui: 501\n";
  const AgentProof proof = judge_agent(agent_entry(false), expectation(), seen);
  ASSERT_TRUE(proof.problem);
  EXPECT_NE(proof.problem->find("agent 'server' is not loaded in launchd"), std::string::npos);
  EXPECT_EQ(to_json(proof)["loaded"], false);
  EXPECT_TRUE(to_json(proof)["state"].is_null());
}

std::string record(const std::string& tag, const std::string& name, const std::string& content) {
  return tag + " " + std::to_string(content.size()) + " " + name + "\n" + content;
}

TEST(AgentProofOutput, ParsesEachAgentsRecords) {
  const std::string output =
      record("print", "server 0", k_running) + record("lsof", "server 0", k_mapped_lines) +
      record("shim-line", "server", "[lume-unlock-shim] enabled for x (") +
      record("print", "once 113", "Could not find service") +
      record("print", "tool 0", "x = {\n\tpid = 7\n}") + record("no-lsof", "tool", "");
  auto parsed = parse_agent_proof(output);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  ASSERT_EQ(parsed.value().size(), 3u);
  EXPECT_EQ(parsed.value()[0].lsof_status, 0);
  EXPECT_EQ(parsed.value()[0].lsof_lines, k_mapped_lines);
  EXPECT_TRUE(parsed.value()[0].shim_line);
  EXPECT_EQ(parsed.value()[1].print_status, 113);
  EXPECT_FALSE(parsed.value()[2].lsof_present);
  // A record for an agent that was not announced is refused.
  EXPECT_FALSE(parse_agent_proof(record("lsof", "server 0", "")).ok());
  EXPECT_FALSE(parse_agent_proof("print 5 server 0\nabc").ok());
}

TEST(AgentProofCommand, QuotesEveryValueAndUsesTheStandardTools) {
  enablement::EnablementEntry entry = agent_entry();
  AgentExpectation expected = expectation();
  expected.process = "it's";
  auto command = agent_proof_command({entry}, {expected}, 501);
  ASSERT_TRUE(command.ok());
  EXPECT_NE(command.value().find("launchctl print \"$2\""), std::string::npos);
  EXPECT_NE(command.value().find("lsof -w -p \"$pid\" -Fn"), std::string::npos);
  EXPECT_NE(command.value().find("prove 'server' 'gui/501/dev.lume-unlock.server' "
                                 "'/Users/lume/Library/Logs/LumeUnlock/server.stderr.log' "
                                 "'[lume-unlock-shim] enabled for it'\\''s ('"),
            std::string::npos)
      << command.value();
}

/// A stand-in that prints `text` and exits with `status`, written to `dir`/`name`.
void write_tool(const test::TempDir& dir, const std::string& name, const std::string& script) {
  ASSERT_TRUE(util::write_file_atomic(dir / name, "#!/bin/sh\n" + script, 0755).ok());
}

// The command itself, run by the shells guests log in with (sh; zsh is macOS's default), against
// stand-ins printing what launchctl and lsof print (docs/sources.md): its records parse, its
// choices (the pid read from print, lsof's lines filtered to the shim, the log's last line for
// the process) are the ones judge_agent needs.
TEST(AgentProofCommand, RunsUnderShAndZshAgainstTheToolsOutput) {
  test::TempDir dir("agent-proof");
  write_tool(dir,
             "launchctl",
             "case $2 in\n"
             "*/dev.lume-unlock.server) printf '%s' \"$PRINT_SERVER\" ;;\n"
             "*) echo 'Could not find service \"x\" in domain for user gui: 501' >&2; exit 113 ;;\n"
             "esac\n");
  write_tool(dir,
             "lsof",
             "[ \"$1 $2 $3 $4\" = '-w -p 4242 -Fn' ] || exit 1\n"
             "printf 'p4242\\nf0\\nn/dev/null\\nftxt\\nn/Users/lume/Library/Application "
             "Support/LumeUnlock/shim/aaa/liblume-unlock-shim.dylib\\n'\n");
  const std::string log = dir / "server.stderr.log";
  ASSERT_TRUE(util::write_file_atomic(log,
                                      "[lume-unlock-shim] not enabled for llama-server: x\n"
                                      "load_tensors: done\n"
                                      "[lume-unlock-shim] enabled for llama-bench (a)\n"
                                      "[lume-unlock-shim] enabled for llama-server (a)\n"
                                      "srv  log line\n",
                                      0644)
                  .ok());
  enablement::EnablementEntry server = agent_entry();
  enablement::EnablementEntry gone = agent_entry();
  gone.name = "gone";
  AgentExpectation expected = expectation();
  expected.shim_suffix = "/shim/aaa/liblume-unlock-shim.dylib";
  expected.stderr_log = log;
  auto command = agent_proof_command({server, gone}, {expected, expected}, 501);
  ASSERT_TRUE(command.ok());
  for (const std::string shell : {"/bin/sh", "/usr/bin/zsh", "/bin/zsh"}) {
    if (!std::filesystem::exists(shell)) {
      continue;
    }
    const auto ran =
        test::run_command({shell, "-c", command.value()},
                          {{"PATH", dir.path() + ":/usr/bin:/bin"}, {"PRINT_SERVER", k_running}});
    ASSERT_EQ(ran.exit_status, 0) << shell << ": " << ran.stderr_text;
    auto parsed = parse_agent_proof(ran.stdout_text);
    ASSERT_TRUE(parsed.ok()) << shell << ": " << parsed.error().message() << "\n"
                             << ran.stdout_text;
    ASSERT_EQ(parsed.value().size(), 2u) << ran.stdout_text;
    const AgentObservation& seen = parsed.value()[0];
    EXPECT_EQ(seen.lsof_status, 0) << shell;
    EXPECT_EQ(seen.lsof_lines,
              "p4242\nn/Users/lume/Library/Application "
              "Support/LumeUnlock/shim/aaa/liblume-unlock-shim.dylib")
        << shell;
    EXPECT_EQ(seen.shim_line, "[lume-unlock-shim] enabled for llama-server (a)") << shell;
    EXPECT_EQ(judge_agent(server, expected, seen).proof, ShimProof::mapped) << shell;
    EXPECT_EQ(parsed.value()[1].print_status, 113) << shell;
    EXPECT_FALSE(parsed.value()[1].lsof_status) << shell;
  }
}

InstalledShim shim_with(const std::string& platform, std::vector<std::string> slices) {
  InstalledShim shim;
  shim.platform = platform;
  shim.inject_env = platform.rfind("darwin", 0) == 0 ? "DYLD_INSERT_LIBRARIES" : "LD_PRELOAD";
  shim.shim.slices = std::move(slices);
  return shim;
}

TEST(ChildRule, FollowsTheShimsSlicesUnlessTheProbeSaysIt) {
  EXPECT_EQ(shim_with("darwin-arm64", {"arm64", "arm64e"}).child_rule(), std::string("inherit"));
  EXPECT_EQ(shim_with("darwin-arm64", {"arm64"}).child_rule(), std::string("removed"));
  EXPECT_EQ(shim_with("darwin-arm64", {}).child_rule(), std::string("unknown"));
  EXPECT_EQ(shim_with("linux-x86_64", {}).child_rule(), std::string("removed"));

  const InstalledShim arm64 = shim_with("darwin-arm64", {"arm64"});
  const auto from_record = child_rule_in_force(arm64, nlohmann::json::object());
  EXPECT_EQ(from_record.rule, "removed");
  EXPECT_EQ(from_record.source, "shim record");
  const auto from_probe =
      child_rule_in_force(arm64, nlohmann::json{{"shim", {{"children", "inherit"}}}});
  EXPECT_EQ(from_probe.rule, "inherit");
  EXPECT_EQ(from_probe.source, "probe");
  InstalledShim certified = shim_with("darwin-arm64", {});
  certified.external = true;
  EXPECT_EQ(certified.child_rule(), std::string("inherit"));
  EXPECT_EQ(child_rule_in_force(certified, nlohmann::json::object()).source, "external shim");
  EXPECT_EQ(describe_child_rule("inherit", "DYLD_INSERT_LIBRARIES"),
            "children keep DYLD_INSERT_LIBRARIES; the guard file decides per executable");
}

TEST(ChildRule, TheRecordKeepsTheShimsSlices) {
  InstalledShim shim = shim_with("darwin-arm64", {"arm64", "arm64e"});
  shim.bundle_version = "1";
  shim.shim.path = "/h/Library/Application Support/LumeUnlock/shim/x/liblume-unlock-shim.dylib";
  shim.shim.sha256 = std::string(64, 'b');
  auto parsed = parse_installed_shim(render_installed_shim(shim), "current.json");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed.value(), shim);
  EXPECT_EQ(parsed.value().child_rule(), std::string("inherit"));
}

} // namespace
} // namespace lume_unlock::apply
