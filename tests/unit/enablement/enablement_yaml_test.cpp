#include "enablement/enablement_yaml.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

namespace lume_unlock::enablement {
namespace {

TEST(EnablementYaml, ReadsTheDesignExample) {
  const char* text = R"(enablement:
  - name: llama-server
    program: /opt/llama.cpp/bin/llama-server
    args: ["--model", "/Users/lume/models/gemma-4-12b-it-qat-q4_0.gguf", "--port", 8080]
    agent: true
    keep_alive: true
    env: {GGML_METAL_NO_RESIDENCY: "1"}
    profile: {apple_family_max: 1009, max_threadgroup_memory: 0x10000}
  - name: llama-cli
    program: /opt/llama.cpp/bin/llama-cli
    agent: false
)";
  const Result<EnablementList> list = parse_enablement_yaml(text, "recipe.yaml");
  ASSERT_TRUE(list.ok()) << list.error().message();
  ASSERT_EQ(list.value().entries.size(), 2u);
  const EnablementEntry& server = list.value().entries[0];
  EXPECT_EQ(server.name, "llama-server");
  EXPECT_EQ(server.program, "/opt/llama.cpp/bin/llama-server");
  EXPECT_EQ(server.args,
            (std::vector<std::string>{
                "--model", "/Users/lume/models/gemma-4-12b-it-qat-q4_0.gguf", "--port", "8080"}));
  EXPECT_TRUE(server.agent);
  EXPECT_TRUE(server.keep_alive);
  EXPECT_EQ(server.env, (std::map<std::string, std::string>{{"GGML_METAL_NO_RESIDENCY", "1"}}));
  ASSERT_TRUE(server.profile);
  EXPECT_EQ(*server.profile, (Profile{1009, 65536}));
  const EnablementEntry& cli = list.value().entries[1];
  EXPECT_FALSE(cli.agent);
  EXPECT_FALSE(cli.keep_alive) << "keep_alive defaults to agent";
  EXPECT_TRUE(cli.args.empty());
  EXPECT_FALSE(cli.profile);
}

TEST(EnablementYaml, ReadsARecipeNodeAndAnEmptyList) {
  const YAML::Node recipe =
      YAML::Load("name: tahoe-llm\nenablement:\n  - {name: a, program: /bin/a}\n");
  const util::YamlReader reader("tahoe-llm.yaml");
  const auto list = reader.run([&] { return read_enablement(reader, recipe["enablement"], "e"); });
  ASSERT_TRUE(list.ok()) << list.error().message();
  EXPECT_EQ(list.value().entries.size(), 1u);
  EXPECT_TRUE(list.value().entries[0].agent) << "agent defaults to true";
  EXPECT_TRUE(list.value().entries[0].keep_alive);

  EXPECT_TRUE(
      read_enablement(reader, YAML::Load("enablement:\n")["enablement"], "e").entries.empty());
  EXPECT_TRUE(parse_enablement_yaml("enablement:\n", "r.yaml").value().entries.empty());
  EXPECT_TRUE(parse_enablement_yaml("enablement: []\n", "r.yaml").value().entries.empty());
}

TEST(EnablementYaml, KeepsAwkwardStringsVerbatim) {
  const char* text =
      "enablement:\n"
      "  - name: x\n"
      "    program: \"/Applications/My App.app/Contents/MacOS/My App\"\n"
      "    args: [\"it's\", '\"q\"', \"a & b <c>\", \"$(whoami)\", \"caf\xc3\xa9\", \"t\\tab\"]\n";
  const auto list = parse_enablement_yaml(text, "r.yaml");
  ASSERT_TRUE(list.ok()) << list.error().message();
  EXPECT_EQ(list.value().entries[0].program, "/Applications/My App.app/Contents/MacOS/My App");
  EXPECT_EQ(list.value().entries[0].args,
            (std::vector<std::string>{
                "it's", "\"q\"", "a & b <c>", "$(whoami)", "caf\xc3\xa9", "t\tab"}));
}

struct ErrorCase {
  const char* label;
  std::string text;
  std::string message;
  std::string hint = {};
};

TEST(EnablementYaml, ErrorsCarryFileLineAndColumn) {
  const ErrorCase cases[] = {
      {"bad name points at the name",
       "enablement:\n  - name: Llama\n    program: /bin/x\n",
       "recipe.yaml:2:11: enablement entry 'Llama': name must match [a-z0-9][a-z0-9-]{0,62}"},
      {"relative program points at the program",
       "enablement:\n  - name: a\n    program: bin/x\n",
       "recipe.yaml:3:14: enablement entry 'a': program 'bin/x' is not an absolute path"},
      {"missing program points at the entry",
       "enablement:\n  - name: a\n    args: []\n",
       "recipe.yaml:2:5: enablement entry 'a': program is required"},
      {"control character in an arg points at that arg",
       "enablement:\n  - name: a\n    program: /bin/a\n    args: [ok, \"x\\ny\"]\n",
       "recipe.yaml:4:16: enablement entry 'a': args[1] contains a control character (0x0a at byte "
       "1); only tab is allowed"},
      {"reserved env key points at the key",
       "enablement:\n  - name: a\n    program: /bin/a\n    env:\n      DYLD_LIBRARY_PATH: /tmp\n",
       "recipe.yaml:5:7: enablement entry 'a': env key 'DYLD_LIBRARY_PATH' is reserved (DYLD_*, "
       "LD_PRELOAD and LUME_* are set by lume-unlock)",
       "set the shim's answers with 'profile:' instead"},
      {"bad env value points at the value",
       "enablement:\n  - name: a\n    program: /bin/a\n    env: {K: \"\\x01\"}\n",
       "recipe.yaml:4:14: enablement entry 'a': env 'K' value contains a control character (0x01 "
       "at byte 0); only tab is allowed"},
      {"profile out of range points at the value",
       "enablement:\n  - name: a\n    program: /bin/a\n    profile: {apple_family_max: 5001, "
       "max_threadgroup_memory: 65536}\n",
       "recipe.yaml:4:33: enablement[0].profile.apple_family_max: 5001 is out of range (1001 to "
       "1999)"},
      {"profile that is not a number",
       "enablement:\n  - name: a\n    program: /bin/a\n    profile:\n      apple_family_max: "
       "nine\n      max_threadgroup_memory: 1\n",
       "recipe.yaml:5:25: enablement[0].profile.apple_family_max: 'nine' is not a whole number "
       "from 1001 to 1999"},
      {"profile with one field",
       "enablement:\n  - name: a\n    program: /bin/a\n    profile: {apple_family_max: 1009}\n",
       "recipe.yaml:4:14: enablement[0].profile: needs both apple_family_max and "
       "max_threadgroup_memory"},
      {"unknown key with a suggestion",
       "enablement:\n  - name: a\n    program: /bin/a\n    agnt: false\n",
       "recipe.yaml:4:5: enablement[0].agnt: unknown key",
       "did you mean 'agent'? (known keys here: name, program, args, agent, keep_alive, env, "
       "profile)"},
      {"duplicate key",
       "enablement:\n  - name: a\n    program: /bin/a\n    program: /bin/b\n",
       "recipe.yaml:4:5: enablement[0].program: is given twice"},
      {"args that is not a list",
       "enablement:\n  - name: a\n    program: /bin/a\n    args: --port 8080\n",
       "recipe.yaml:4:11: enablement[0].args: must be a list"},
      {"nested list in args",
       "enablement:\n  - name: a\n    program: /bin/a\n    args: [[x]]\n",
       "recipe.yaml:4:12: enablement[0].args[0]: must be a string"},
      {"agent that is not a boolean",
       "enablement:\n  - name: a\n    program: /bin/a\n    agent: maybe\n",
       "recipe.yaml:4:12: enablement[0].agent: must be true or false"},
      {"keep_alive on an exec-only entry points at keep_alive",
       "enablement:\n  - name: a\n    program: /bin/a\n    agent: false\n    keep_alive: true\n",
       "recipe.yaml:5:17: enablement entry 'a': keep_alive is true but agent is false",
       "only LaunchAgents are kept alive; set 'keep_alive: false' or 'agent: true'"},
      {"entry without a name is named by position",
       "enablement:\n  - {name: a, program: /bin/a}\n  - program: /bin/b\n",
       "recipe.yaml:3:5: enablement entry 2: name is required"},
      {"program that is not a string",
       "enablement:\n  - program: [x]\n",
       "recipe.yaml:2:14: enablement[0].program: must be a string"},
      {"shape error before the name is known",
       "enablement:\n  - {name: a, program: /bin/a}\n  - just-a-string\n",
       "recipe.yaml:3:5: enablement[1]: must be a mapping of keys to values"},
      {"duplicate names point at the second",
       "enablement:\n  - {name: a, program: /bin/a}\n  - {name: a, program: /bin/b}\n",
       "recipe.yaml:3:12: enablement entry 'a': name is used twice (entries 1 and 2)"},
      {"enablement that is not a list",
       "enablement: {name: a}\n",
       "recipe.yaml:1:13: enablement: must be a list of entries"},
      {"unknown top-level key",
       "enablemnt: []\n",
       "recipe.yaml:1:1: enablemnt: unknown key",
       "did you mean 'enablement'? (known keys here: enablement)"},
      {"missing enablement key",
       "{}\n",
       "recipe.yaml:1:1: enablement: is required",
       "write 'enablement:' and a list of entries"},
      {"empty document",
       "",
       "recipe.yaml: the enablement list is empty",
       "write 'enablement:' and a list of entries"},
      {"YAML syntax error",
       "enablement:\n  - name: a\n   program: /bin/a\n",
       "recipe.yaml:3:4: invalid YAML: end of sequence not found"},
  };
  for (const ErrorCase& c : cases) {
    const auto list = parse_enablement_yaml(c.text, "recipe.yaml");
    ASSERT_FALSE(list.ok()) << c.label;
    EXPECT_EQ(list.error().message(), c.message) << c.label;
    EXPECT_EQ(list.error().category(), ErrorCategory::usage) << c.label;
    if (!c.hint.empty()) {
      EXPECT_EQ(list.error().hint(), c.hint) << c.label;
    }
  }
}

} // namespace
} // namespace lume_unlock::enablement
