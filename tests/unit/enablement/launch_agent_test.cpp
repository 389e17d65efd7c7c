#include "enablement/enablement_plan.hpp"
#include "plistlib.hpp"
#include "util/sha256.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace lume_unlock::enablement {
namespace {

using nlohmann::json;

const std::string k_sha = "d2ce11e6cd74e903282f7b39d2cf79a029105733031e228a38beeda795069801";

guest::GuestLayout layout_for(const std::string& home) {
  return guest::GuestLayout::make(home, k_sha).value_or_throw();
}

/// Loads `plist` with plistlib; skips (or fails under CI) when python3 is missing.
#define PARSE_OR_SKIP(var, plist)                                                                  \
  const testing::PlistParse var = testing::parse_with_plistlib(plist);                             \
  if (!var.python_available) {                                                                     \
    if (const char* ci = std::getenv("CI"); ci != nullptr && std::string(ci) == "true") {          \
      FAIL() << "/usr/bin/python3 is required to check plists";                                    \
    }                                                                                              \
    GTEST_SKIP() << "/usr/bin/python3 not available to check plists";                              \
  }                                                                                                \
  ASSERT_TRUE(var.ok) << var.error << "\n" << plist

EnablementEntry awkward_entry() {
  EnablementEntry entry;
  entry.name = "my-app";
  entry.program = "/Applications/R&D <beta> \"Tools\".app/Contents/MacOS/it's";
  entry.args = {"--prompt",
                "Tom & Jerry <say> \"hi\" it's",
                "$(rm -rf ~)",
                "`id`",
                "a b  c",
                "tab\tsep",
                "na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\xa6\x99",
                "]]>",
                "&amp;",
                ""};
  entry.env = {{"PROMPT", "<&>\"'"}, {"EMPTY", ""}, {"UNICODE", "\xc3\xa9t\xc3\xa9"}};
  entry.keep_alive = false;
  return entry;
}

TEST(LaunchAgent, AwkwardStringsSurviveAnIndependentParser) {
  const guest::GuestLayout layout = layout_for("/Users/Zo\xc3\xab O'Brien & Co");
  const EnablementEntry entry = awkward_entry();
  const Result<std::string> plist = render_launch_agent(entry, layout, AgentSettings{});
  ASSERT_TRUE(plist.ok()) << plist.error().message();
  PARSE_OR_SKIP(parsed, plist.value());

  json arguments = json::array({entry.program});
  for (const std::string& arg : entry.args) {
    arguments.push_back(arg);
  }
  const json expected = {
      {"Label", "dev.lume-unlock.my-app"},
      {"ProgramArguments", arguments},
      {"EnvironmentVariables",
       {{"DYLD_INSERT_LIBRARIES", layout.shim_path()},
        {"LUME_METAL_APPLE_FAMILY_MAX", "1009"},
        {"LUME_METAL_MAX_THREADGROUP_MEMORY", "65536"},
        {"LUME_UNLOCK_ENABLEMENT", layout.guard_file_path()},
        {"PROMPT", "<&>\"'"},
        {"EMPTY", ""},
        {"UNICODE", "\xc3\xa9t\xc3\xa9"}}},
      {"RunAtLoad", true},
      {"KeepAlive", false},
      {"StandardOutPath", layout.stdout_log_path("my-app")},
      {"StandardErrorPath", layout.stderr_log_path("my-app")},
  };
  EXPECT_EQ(parsed.value, expected);
}

TEST(LaunchAgent, ProfileOverrideAndInjectionVariable) {
  const guest::GuestLayout layout =
      guest::GuestLayout::make("/home/sim", k_sha, "liblume-unlock-shim.so").value_or_throw();
  EnablementEntry entry;
  entry.name = "probe";
  entry.program = "/opt/probe";
  AgentSettings settings;
  settings.inject_variable = "LD_PRELOAD";
  settings.default_profile = Profile{1007, 32768};

  const std::string with_default = render_launch_agent(entry, layout, settings).value_or_throw();
  PARSE_OR_SKIP(parsed_default, with_default);
  const json& env = parsed_default.value["EnvironmentVariables"];
  EXPECT_EQ(env,
            (json{{"LD_LIBRARY_PATH", layout.shim_dir()},
                  {"LD_PRELOAD", "liblume-unlock-shim.so"},
                  {"LUME_METAL_APPLE_FAMILY_MAX", "1007"},
                  {"LUME_METAL_MAX_THREADGROUP_MEMORY", "32768"},
                  {"LUME_UNLOCK_ENABLEMENT", layout.guard_file_path()}}));
  EXPECT_EQ(parsed_default.value["ProgramArguments"], json::array({"/opt/probe"}));
  EXPECT_EQ(parsed_default.value["KeepAlive"], true);

  entry.profile = Profile{1009, 0x10000};
  const std::string with_own = render_launch_agent(entry, layout, settings).value_or_throw();
  PARSE_OR_SKIP(parsed_own, with_own);
  EXPECT_EQ(parsed_own.value["EnvironmentVariables"]["LUME_METAL_APPLE_FAMILY_MAX"], "1009");
  EXPECT_EQ(parsed_own.value["EnvironmentVariables"]["LUME_METAL_MAX_THREADGROUP_MEMORY"], "65536");
}

TEST(LaunchAgent, SameInputsGiveTheSameBytes) {
  const guest::GuestLayout layout = layout_for("/Users/lume");
  EnablementEntry a = awkward_entry();
  EnablementEntry b = a;
  b.env.clear();
  // Insert in another order: the rendered dictionary is sorted anyway.
  b.env["UNICODE"] = a.env["UNICODE"];
  b.env["PROMPT"] = a.env["PROMPT"];
  b.env["EMPTY"] = a.env["EMPTY"];
  const std::string first = render_launch_agent(a, layout, AgentSettings{}).value_or_throw();
  EXPECT_EQ(render_launch_agent(b, layout, AgentSettings{}).value_or_throw(), first);
  EXPECT_EQ(render_launch_agent(a, layout, AgentSettings{}).value_or_throw(), first);

  b.args.push_back("x");
  EXPECT_NE(render_launch_agent(b, layout, AgentSettings{}).value_or_throw(), first);
}

TEST(LaunchAgent, KeysAreSortedAndTheHeaderIsApples) {
  const std::string plist =
      render_launch_agent(awkward_entry(), layout_for("/Users/lume"), AgentSettings{})
          .value_or_throw();
  EXPECT_EQ(
      plist.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
                  "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">\n",
                  0),
      0u);
  const char* order[] = {"<key>EnvironmentVariables</key>",
                         "<key>KeepAlive</key>",
                         "<key>Label</key>",
                         "<key>ProgramArguments</key>",
                         "<key>RunAtLoad</key>",
                         "<key>StandardErrorPath</key>",
                         "<key>StandardOutPath</key>"};
  std::size_t last = 0;
  for (const char* key : order) {
    const std::size_t at = plist.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    EXPECT_GT(at, last) << key;
    last = at;
  }
  EXPECT_EQ(plist.find("$(rm -rf ~)"), plist.rfind("$(rm -rf ~)"))
      << "each argument appears once, verbatim";
  EXPECT_EQ(plist.find("<&>"), std::string::npos) << "no raw markup characters";
}

TEST(LaunchAgent, RenderAgentsCoversAgentEntriesOnly) {
  const guest::GuestLayout layout = layout_for("/Users/lume");
  EnablementList list;
  EnablementEntry exec_only = awkward_entry();
  exec_only.name = "tool";
  exec_only.agent = false;
  list.entries = {exec_only, awkward_entry()};
  const auto agents = render_agents(list, layout, AgentSettings{});
  ASSERT_TRUE(agents.ok()) << agents.error().message();
  ASSERT_EQ(agents.value().size(), 1u);
  const RenderedAgent& agent = agents.value()[0];
  EXPECT_EQ(agent.name, "my-app");
  EXPECT_EQ(agent.label, "dev.lume-unlock.my-app");
  EXPECT_EQ(agent.plist_path, layout.agent_plist_path("my-app"));
  EXPECT_EQ(agent.content, render_launch_agent(list.entries[1], layout, AgentSettings{}).value());
  EXPECT_EQ(agent.sha256, util::sha256_hex(agent.content));

  list.entries[1].env["LUME_X"] = "1";
  EXPECT_EQ(
      render_agents(list, layout, AgentSettings{}).error().message(),
      "enablement entry 'my-app': env key 'LUME_X' is reserved (DYLD_*, LD_PRELOAD and LUME_* are "
      "set by lume-unlock)");
}

TEST(LaunchAgent, RefusesInvalidEntriesAndVariableClashes) {
  const guest::GuestLayout layout = layout_for("/Users/lume");
  EnablementEntry entry = awkward_entry();
  entry.program = "relative";
  EXPECT_EQ(render_launch_agent(entry, layout, AgentSettings{}).error().message(),
            "enablement entry 'my-app': program 'relative' is not an absolute path");

  entry = awkward_entry();
  AgentSettings settings;
  settings.inject_variable = "PROMPT";
  EXPECT_EQ(render_launch_agent(entry, layout, settings).error().message(),
            "enablement entry 'my-app': env key 'PROMPT' is set by lume-unlock");

  settings.inject_variable = "NOT A NAME";
  EXPECT_EQ(render_launch_agent(entry, layout, settings).error().message(),
            "launch agent of enablement entry 'my-app': injection variable 'NOT A NAME' is not a "
            "variable name");
}

} // namespace
} // namespace lume_unlock::enablement
