// verify proves that each running agent is unlocked (issue 43 §4): guest-sim's launchctl starts
// the agent's program with its plist's environment, as launchd does, and the real lsof lists what
// is mapped in the process. An agent whose process runs without the shim fails verify (exit 6)
// naming it; every entry says which child rule is in force.
#include "pipeline_fixture.hpp"

#include <regex>

namespace lume_unlock::test {
namespace {

class VerifyAgents : public PipelineWorld {
protected:
  /// The standard recipe plus a long-running agent (`server`, kept alive) and a program that is
  /// only listed (`tool`, no agent).
  void write_agents_recipe() {
    write_recipe(std::string("  - name: server\n") + "    program: /bin/sleep\n" +
                 "    args: [\"600\"]\n" + "  - name: tool\n" + "    program: " + probe_path() +
                 "\n" + "    agent: false\n");
  }

  static const nlohmann::json* entry_of(const nlohmann::json& doc, const std::string& name) {
    for (const auto& entry : doc["entries"]) {
      if (entry["name"] == name) {
        return &entry;
      }
    }
    return nullptr;
  }
};

TEST_F(VerifyAgents, AnAgentRunningWithTheShimPassesAndOneStartedWithoutItFails) {
  start_world();
  write_agents_recipe();
  ASSERT_EQ(create().exit_code, 0);

  CliRun ok = cli({"verify", "vm1"}, true, {"--json"});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  const nlohmann::json doc = json_of(ok);
  const nlohmann::json* server = entry_of(doc, "server");
  ASSERT_NE(server, nullptr) << ok.out;
  EXPECT_EQ((*server)["process"]["state"], "running") << server->dump(2);
  EXPECT_TRUE((*server)["process"]["pid"].is_number());
  EXPECT_EQ((*server)["process"]["shim_mapped"], true);
  EXPECT_EQ((*server)["process"]["proof"], "mapped");
  EXPECT_TRUE((*server)["process"]["problem"].is_null());
  // The probe agent ran once and exited: not kept alive, so nothing to prove and no failure.
  const nlohmann::json* probe = entry_of(doc, "probe-agent");
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ((*probe)["process"]["state"], "not running");
  EXPECT_TRUE((*probe)["process"]["problem"].is_null());
  // A listed program has no process to check; every entry names the child rule: the Linux
  // shim removes itself from LD_PRELOAD at load.
  const nlohmann::json* tool = entry_of(doc, "tool");
  ASSERT_NE(tool, nullptr);
  EXPECT_TRUE((*tool)["process"].is_null());
  for (const auto* entry : {server, probe, tool}) {
    EXPECT_EQ((*entry)["children"]["rule"], "removed") << entry->dump();
  }

  CliRun text = cli({"verify", "vm1"});
  ASSERT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("  entry 'server': agent running (pid "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("), the shim is mapped in it (lsof); children: removed (the shim "
                          "removes itself from LD_PRELOAD at load: children start stock)\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  entry 'tool': children: removed"), std::string::npos) << text.out;

  // launchd restarts the agent from a plist whose environment lacks the injection variable: its
  // process runs stock, and verify names it.
  const std::string plist =
      guest.info().home + "/Library/LaunchAgents/dev.lume-unlock.server.plist";
  const std::string rendered = slurp(plist);
  const std::string stripped = std::regex_replace(
      rendered, std::regex("\\s*<key>LD_PRELOAD</key>\\s*<string>[^<]*</string>"), "");
  ASSERT_NE(stripped, rendered);
  ASSERT_TRUE(util::write_file_atomic(plist, stripped, 0644).ok());
  CliRun restarted =
      guest_run({"/bin/sh",
                 "-c",
                 "launchctl bootout gui/$(id -u)/dev.lume-unlock.server && launchctl bootstrap "
                 "gui/$(id -u) \"$HOME/Library/LaunchAgents/dev.lume-unlock.server.plist\""});
  ASSERT_EQ(restarted.exit_code, 0) << restarted.out << restarted.err;

  CliRun failed = cli({"verify", "vm1"}, true, {"--json"});
  EXPECT_EQ(failed.exit_code, 6) << failed.out << failed.err;
  const nlohmann::json bad = json_of(failed);
  EXPECT_EQ(bad["ok"], false);
  const nlohmann::json* stock = entry_of(bad, "server");
  ASSERT_NE(stock, nullptr) << failed.out;
  EXPECT_EQ((*stock)["process"]["state"], "running");
  EXPECT_EQ((*stock)["process"]["shim_mapped"], false);
  ASSERT_TRUE((*stock)["process"]["problem"].is_string()) << stock->dump(2);
  EXPECT_NE((*stock)["process"]["problem"].get<std::string>().find(
                "agent 'server' (pid " +
                std::to_string((*stock)["process"]["pid"].get<long long>()) +
                ") runs without the shim"),
            std::string::npos)
      << stock->dump(2);
  bool named = false;
  for (const auto& problem : bad["problems"]) {
    named = named || problem.get<std::string>().find("agent 'server'") != std::string::npos;
  }
  EXPECT_TRUE(named) << bad["problems"].dump();
  CliRun words = cli({"verify", "vm1"});
  EXPECT_EQ(words.exit_code, 6);
  EXPECT_NE(words.out.find("WITHOUT the shim"), std::string::npos) << words.out;
  EXPECT_NE(words.err.find("agent 'server'"), std::string::npos) << words.err;
}

} // namespace
} // namespace lume_unlock::test
