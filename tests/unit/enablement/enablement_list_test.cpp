#include "enablement/enablement_list.hpp"
#include "util/yaml_reader.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace lume_unlock::enablement {
namespace {

EnablementEntry good_entry() {
  EnablementEntry entry;
  entry.name = "llama-server";
  entry.program = "/opt/llama.cpp/bin/llama-server";
  entry.args = {"--model", "/Users/lume/models/gemma 4.gguf", "--port", "8080"};
  entry.env = {{"GGML_METAL_NO_RESIDENCY", "1"}};
  return entry;
}

struct Case {
  const char* label;
  std::function<void(EnablementEntry&)> edit;
  std::string message; // empty: valid
  std::string hint = {};
};

TEST(EnablementList, ValidationTable) {
  const std::string long_name(63, 'a');
  const Case cases[] = {
      {"good", [](EnablementEntry&) {}, ""},
      {"name of 63 characters", [&](EnablementEntry& e) { e.name = long_name; }, ""},
      {"digit first", [](EnablementEntry& e) { e.name = "7zip"; }, ""},
      {"exec-only without keep-alive",
       [](EnablementEntry& e) {
         e.agent = false;
         e.keep_alive = false;
       },
       ""},
      {"awkward args are fine",
       [](EnablementEntry& e) {
         e.args = {
             "it's", "\"quoted\"", "a & b", "<x>", "$(rm -rf /)", "tab\there", "caf\xc3\xa9", ""};
       },
       ""},
      {"tab in env value", [](EnablementEntry& e) { e.env["X"] = "a\tb"; }, ""},
      {"lower-case env key", [](EnablementEntry& e) { e.env["_private1"] = ""; }, ""},
      {"profile at the bounds",
       [](EnablementEntry& e) {
         e.profile = Profile{1999, 1ULL << 30};
       },
       ""},
      {"empty name",
       [](EnablementEntry& e) { e.name = ""; },
       "enablement entry '': name is required",
       "name each entry, e.g. 'name: llama-server'"},
      {"upper-case name",
       [](EnablementEntry& e) { e.name = "Llama"; },
       "enablement entry 'Llama': name must match [a-z0-9][a-z0-9-]{0,62}",
       "use lower-case letters, digits and '-', e.g. 'llama-server'"},
      {"name starting with dash",
       [](EnablementEntry& e) { e.name = "-x"; },
       "enablement entry '-x': name must match [a-z0-9][a-z0-9-]{0,62}"},
      {"name with dot",
       [](EnablementEntry& e) { e.name = "a.b"; },
       "enablement entry 'a.b': name must match [a-z0-9][a-z0-9-]{0,62}"},
      {"name of 64 characters",
       [&](EnablementEntry& e) { e.name = long_name + "a"; },
       "enablement entry '" + long_name + "a': name must match [a-z0-9][a-z0-9-]{0,62}"},
      {"name with newline",
       [](EnablementEntry& e) { e.name = "a\nb"; },
       "enablement entry 'a\\x0ab': name must match [a-z0-9][a-z0-9-]{0,62}"},
      {"missing program",
       [](EnablementEntry& e) { e.program = ""; },
       "enablement entry 'llama-server': program is required",
       "give the program's full path in the guest, e.g. '/opt/llama.cpp/bin/llama-server'"},
      {"relative program",
       [](EnablementEntry& e) { e.program = "bin/llama-server"; },
       "enablement entry 'llama-server': program 'bin/llama-server' is not an absolute path"},
      {"program with newline",
       [](EnablementEntry& e) { e.program = "/opt/x\n/etc/passwd"; },
       "enablement entry 'llama-server': program contains a control character (0x0a at byte 6); "
       "only tab is allowed"},
      {"program with NUL",
       [](EnablementEntry& e) { e.program = std::string("/opt/x\0y", 8); },
       "enablement entry 'llama-server': program contains a control character (0x00 at byte 6); "
       "only tab is allowed"},
      {"program with dot-dot",
       [](EnablementEntry& e) { e.program = "/opt/../bin/x"; },
       "enablement entry 'llama-server': program '/opt/../bin/x' is not a normalized path (empty, "
       "'.' or '..' component)"},
      {"program with double slash",
       [](EnablementEntry& e) { e.program = "/opt//x"; },
       "enablement entry 'llama-server': program '/opt//x' is not a normalized path (empty, '.' or "
       "'..' component)"},
      {"program with trailing slash",
       [](EnablementEntry& e) { e.program = "/opt/x/"; },
       "enablement entry 'llama-server': program '/opt/x/' is not a normalized path (empty, '.' or "
       "'..' component)"},
      {"program is the root",
       [](EnablementEntry& e) { e.program = "/"; },
       "enablement entry 'llama-server': program '/' is not a normalized path (empty, '.' or '..' "
       "component)"},
      {"program longer than PATH_MAX",
       [](EnablementEntry& e) { e.program = "/" + std::string(1023, 'a'); },
       "enablement entry 'llama-server': program is 1024 bytes long, more than the guest's "
       "PATH_MAX of 1023 bytes",
       "give the program's full path in the guest, e.g. '/opt/llama.cpp/bin/llama-server'"},
      {"program with trailing space",
       [](EnablementEntry& e) { e.program = "/opt/x "; },
       "enablement entry 'llama-server': program '/opt/x ' ends with whitespace"},
      {"arg with newline",
       [](EnablementEntry& e) { e.args[1] = "a\nb"; },
       "enablement entry 'llama-server': args[1] contains a control character (0x0a at byte 1); "
       "only tab is allowed"},
      {"arg with escape",
       [](EnablementEntry& e) { e.args.push_back("\x1b[2J"); },
       "enablement entry 'llama-server': args[4] contains a control character (0x1b at byte 0); "
       "only tab is allowed"},
      {"arg with invalid UTF-8",
       [](EnablementEntry& e) { e.args[0] = "\xff"; },
       "enablement entry 'llama-server': args[0] is not valid UTF-8 (at byte 0)"},
      {"DYLD_ key",
       [](EnablementEntry& e) { e.env["DYLD_INSERT_LIBRARIES"] = "/tmp/evil.dylib"; },
       "enablement entry 'llama-server': env key 'DYLD_INSERT_LIBRARIES' is reserved (DYLD_*, "
       "LD_PRELOAD and LUME_* are set by lume-unlock)",
       "set the shim's answers with 'profile:' instead"},
      {"LUME_ key",
       [](EnablementEntry& e) { e.env["LUME_UNLOCK_DISABLE"] = "1"; },
       "enablement entry 'llama-server': env key 'LUME_UNLOCK_DISABLE' is reserved (DYLD_*, "
       "LD_PRELOAD and LUME_* are set by lume-unlock)"},
      {"LD_PRELOAD key",
       [](EnablementEntry& e) { e.env["LD_PRELOAD"] = "x"; },
       "enablement entry 'llama-server': env key 'LD_PRELOAD' is reserved (DYLD_*, LD_PRELOAD and "
       "LUME_* are set by lume-unlock)"},
      {"env key with digit first",
       [](EnablementEntry& e) { e.env["1X"] = "1"; },
       "enablement entry 'llama-server': env key '1X' must match [A-Za-z_][A-Za-z0-9_]*"},
      {"env key with equals",
       [](EnablementEntry& e) { e.env["A=B"] = "1"; },
       "enablement entry 'llama-server': env key 'A=B' must match [A-Za-z_][A-Za-z0-9_]*"},
      {"empty env key",
       [](EnablementEntry& e) { e.env[""] = "1"; },
       "enablement entry 'llama-server': env key '' must match [A-Za-z_][A-Za-z0-9_]*"},
      {"env value with NUL",
       [](EnablementEntry& e) { e.env["X"] = std::string("a\0", 2); },
       "enablement entry 'llama-server': env 'X' value contains a control character (0x00 at byte "
       "1); only tab is allowed"},
      {"family below range",
       [](EnablementEntry& e) {
         e.profile = Profile{1000, 65536};
       },
       "enablement entry 'llama-server': profile apple_family_max 1000 is outside 1001..1999",
       "the shim stays inert outside that range; 1009 (Apple family 9) is the tested value"},
      {"Metal3 family",
       [](EnablementEntry& e) {
         e.profile = Profile{5001, 65536};
       },
       "enablement entry 'llama-server': profile apple_family_max 5001 is outside 1001..1999"},
      {"zero threadgroup memory",
       [](EnablementEntry& e) {
         e.profile = Profile{1009, 0};
       },
       "enablement entry 'llama-server': profile max_threadgroup_memory 0 is outside 1..1073741824",
       "65536 (64 KiB) is the tested value"},
      {"huge threadgroup memory",
       [](EnablementEntry& e) {
         e.profile = Profile{1009, (1ULL << 30) + 1};
       },
       "enablement entry 'llama-server': profile max_threadgroup_memory 1073741825 is outside "
       "1..1073741824"},
      {"keep-alive without agent",
       [](EnablementEntry& e) { e.agent = false; },
       "enablement entry 'llama-server': keep_alive is true but agent is false",
       "only LaunchAgents are kept alive; set 'keep_alive: false' or 'agent: true'"},
  };
  for (const Case& c : cases) {
    EnablementEntry entry = good_entry();
    c.edit(entry);
    const Status status = validate(entry);
    if (c.message.empty()) {
      EXPECT_TRUE(status.ok()) << c.label << ": " << status.error().message();
      continue;
    }
    ASSERT_FALSE(status.ok()) << c.label;
    EXPECT_EQ(status.error().message(), c.message) << c.label;
    EXPECT_EQ(status.error().category(), ErrorCategory::usage) << c.label;
    if (!c.hint.empty()) {
      EXPECT_EQ(status.error().hint(), c.hint) << c.label;
    }
  }
}

TEST(EnablementList, ViolationNamesTheFieldForLoaders) {
  EnablementEntry entry = good_entry();
  entry.args[2] = "\r";
  auto v = find_violation(entry);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->field, Field::arg);
  EXPECT_EQ(v->arg_index, 2u);

  entry = good_entry();
  entry.env["LUME_X"] = "1";
  v = find_violation(entry);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->field, Field::env_key);
  EXPECT_EQ(v->env_key, "LUME_X");

  entry = good_entry();
  entry.env["OK"] = "\n";
  v = find_violation(entry);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->field, Field::env_value);
  EXPECT_EQ(v->env_key, "OK");
}

TEST(EnablementList, DuplicateNamesAreRejectedOnTheLaterEntry) {
  EnablementList list;
  list.entries = {good_entry(), good_entry(), good_entry()};
  list.entries[1].name = "other";
  const auto found = find_violation(list);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->index, 2u);
  EXPECT_EQ(found->violation.field, Field::name);
  EXPECT_EQ(validate(list).error().message(),
            "enablement entry 'llama-server': name is used twice (entries 1 and 3)");
}

TEST(EnablementList, FirstInvalidEntryIsReported) {
  EnablementList list;
  list.entries = {good_entry(), good_entry()};
  list.entries[1].name = "second";
  list.entries[1].program = "relative";
  EXPECT_EQ(validate(list).error().message(),
            "enablement entry 'second': program 'relative' is not an absolute path");
  list.entries[1].program = "/bin/ok";
  EXPECT_TRUE(validate(list).ok());
}

TEST(EnablementList, FindAndEffectiveProfile) {
  EnablementList list;
  list.entries = {good_entry()};
  ASSERT_NE(list.find("llama-server"), nullptr);
  EXPECT_EQ(list.find("nope"), nullptr);
  EXPECT_EQ(list.names(), std::vector<std::string>{"llama-server"});

  const Profile fallback{1007, 32768};
  EXPECT_EQ(effective_profile(list.entries[0], fallback), fallback);
  list.entries[0].profile = Profile{1009, 65536};
  EXPECT_EQ(effective_profile(list.entries[0], fallback), (Profile{1009, 65536}));
}

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
