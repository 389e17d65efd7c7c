// The end-to-end check: the real linux-x86_64 shim-bundle entry installed into guest-sim,
// the installed probe enabled as an agent with `lume-unlock allow add`, kickstarted, its answers
// unlocked and the shim's activation line logged; `allow remove` then leaves nothing behind. And
// the same through symbolic links (issue 13 §4).
#include "integration/apply/cli_fixture.hpp"
#include "support/file_io.hpp"
#include "util/atomic_file.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

namespace lume_unlock::cli {
namespace {

namespace fs = std::filesystem;
using test::slurp;

/// Every JSON document in `text`, in order (the agent's log gets one per run).
std::vector<nlohmann::json> documents(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  while (in >> std::ws && in.peek() != EOF) {
    nlohmann::json document;
    try {
      in >> document;
    } catch (const nlohmann::json::exception&) {
      break; // a document still being written
    }
    out.push_back(document);
  }
  return out;
}

class ProbeEndToEnd : public test::CliGuestTest {
protected:
  /// Installs the real linux-x86_64 bundle entry into the guest; `facts` are the guest's.
  void install_real_bundle(guest::GuestFacts& facts) {
    auto loaded = bundle::load_bundle_directory(LUME_UNLOCK_SHIM_BUNDLE_DIR);
    LUME_UNLOCK_REQUIRE(loaded.ok(),
                        "no shim bundle at " LUME_UNLOCK_SHIM_BUNDLE_DIR ": " +
                            (loaded.ok() ? std::string() : loaded.error().message()));
    const auto& platforms = loaded.value().manifest().platforms;
    LUME_UNLOCK_REQUIRE(platforms.count("linux-x86_64") && platforms.at("linux-x86_64").probe,
                        "the shim bundle has no linux-x86_64 entry with a probe");
    facts = install(loaded.value());
  }

  /// `allow add`s `program` as the agent 'probe' (--json, not kept alive), kickstarts it and
  /// expects its last run to see the unlocked device, with the shim's activation line logged.
  void expect_probe_agent_unlocked(const guest::GuestFacts& facts, const std::string& program) {
    const std::string label = "dev.lume-unlock.probe";
    const std::string service = "gui/" + std::to_string(facts.uid) + "/" + label;
    auto added = run(
        {"allow", "add", "vm1", "probe", "--program", program, "--arg=--json", "--no-keep-alive"});
    ASSERT_EQ(added.exit_code, 0) << added.err;
    EXPECT_NE(added.out.find("add agent 'probe' (" + label + ")"), std::string::npos) << added.out;

    auto kicked = run({"ssh", "vm1"}, {"--", "launchctl", "kickstart", "-k", service});
    ASSERT_EQ(kicked.exit_code, 0) << kicked.err;

    // RunAtLoad ran it once at bootstrap, the kickstart once more: wait for both documents.
    const std::string out_log = facts.home + "/Library/Logs/LumeUnlock/probe.stdout.log";
    const std::string err_log = facts.home + "/Library/Logs/LumeUnlock/probe.stderr.log";
    std::vector<nlohmann::json> runs;
    for (int i = 0; i < 200 && runs.size() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      runs = documents(slurp(out_log));
    }
    ASSERT_EQ(runs.size(), 2u) << slurp(out_log) << "\nstderr:\n" << slurp(err_log);
    const nlohmann::json& answers = runs.back();
    EXPECT_EQ(answers["shim"]["state"], "active") << answers.dump(2);
    EXPECT_EQ(answers["families"]["1009"], true);
    EXPECT_EQ(answers["families"]["1010"], false);
    EXPECT_EQ(answers["families"]["5001"], false);
    EXPECT_EQ(answers["max_threadgroup_memory"], 65536);
    EXPECT_NE(slurp(err_log).find("[lume-unlock-shim] enabled for"), std::string::npos)
        << slurp(err_log);
  }
};

TEST_F(ProbeEndToEnd, ProbeAgentSeesTheUnlockedDeviceAndRemoveLeavesNothing) {
  guest::GuestFacts facts;
  install_real_bundle(facts);
  if (HasFatalFailure() || IsSkipped()) {
    return;
  }
  const std::string support = facts.home + "/Library/Application Support/LumeUnlock";
  const std::string probe = support + "/bin/lume-unlock-probe";
  const std::string label = "dev.lume-unlock.probe";
  const std::string service = "gui/" + std::to_string(facts.uid) + "/" + label;
  expect_probe_agent_unlocked(facts, probe);
  if (HasFatalFailure()) {
    return;
  }

  auto removed = run({"allow", "remove", "vm1", "probe"});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_FALSE(fs::exists(facts.home + "/Library/LaunchAgents/" + label + ".plist"));
  EXPECT_EQ(slurp(support + "/enabled-executables").find(probe), std::string::npos);
  auto printed = run({"ssh", "vm1"}, {"--", "launchctl", "print", service});
  EXPECT_EQ(printed.exit_code, 113) << printed.out;
}

// The symlink case: the agent runs the probe through guest-sim's /tmp-style directory
// link (DIR/tmp -> private/tmp) and then a relative file link, as a Homebrew or venv program is
// reached. The shim compares the executable's realpath with the guard file, so it is active only
// when the guard lists the resolved path.
TEST_F(ProbeEndToEnd, ProbeReachedThroughLinksIsUnlocked) {
  guest::GuestFacts facts;
  install_real_bundle(facts);
  if (HasFatalFailure() || IsSkipped()) {
    return;
  }
  const std::string dir = sim.dir();
  ASSERT_EQ(fs::read_symlink(dir + "/tmp"), "private/tmp");
  // From DIR/private/tmp/llm/bin, four levels up is DIR.
  auto linked = run({"ssh", "vm1"},
                    {"--",
                     "sh",
                     "-c",
                     "mkdir -p \"$1/tmp/llm/bin\" && ln -s \"../../../../home/Library/Application "
                     "Support/LumeUnlock/bin/lume-unlock-probe\" \"$1/tmp/llm/bin/probe\"",
                     "sh",
                     dir});
  ASSERT_EQ(linked.exit_code, 0) << linked.err;
  const std::string program = dir + "/tmp/llm/bin/probe";
  const std::string real = fs::canonical(program).string();
  ASSERT_EQ(real,
            fs::canonical(facts.home + "/Library/Application Support/LumeUnlock/bin/"
                                       "lume-unlock-probe")
                .string());

  expect_probe_agent_unlocked(facts, program);
  const std::string support = facts.home + "/Library/Application Support/LumeUnlock";
  EXPECT_NE(slurp(support + "/enabled-executables").find("\n" + real + "\n"), std::string::npos);
  EXPECT_NE(slurp(facts.home + "/Library/LaunchAgents/dev.lume-unlock.probe.plist").find(program),
            std::string::npos)
      << "the agent runs the program as the user wrote it";
}

} // namespace
} // namespace lume_unlock::cli
