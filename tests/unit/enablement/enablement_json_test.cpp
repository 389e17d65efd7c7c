#include "enablement/enablement_list.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lume_unlock::enablement {
namespace {

EnablementList sample_list() {
  EnablementList list;
  EnablementEntry server;
  server.name = "llama-server";
  server.program = "/opt/llama.cpp/bin/llama-server";
  server.args = {
      "--model", "/Users/me/My Models/g\xc3\xa9mma.gguf", "--prompt", "it's \"<&>\" $(x)\ty"};
  server.env = {{"GGML_METAL_NO_RESIDENCY", "1"}, {"A_FIRST", ""}};
  server.profile = Profile{1007, 32768};
  server.resolved_program = "/opt/llama.cpp/Cellar/b4000/bin/llama-server";
  EnablementEntry cli;
  cli.name = "llama-cli";
  cli.program = "/opt/llama.cpp/bin/llama-cli";
  cli.agent = false;
  cli.keep_alive = false;
  list.entries = {server, cli};
  return list;
}

TEST(EnablementJson, RoundTripsEveryField) {
  const EnablementList list = sample_list();
  const std::string text = render_enablement_json(list);
  const Result<EnablementList> back = parse_enablement_json(text, "enablement.json");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back.value(), list);
  EXPECT_EQ(render_enablement_json(back.value()), text) << "rendering is a fixed point";
}

TEST(EnablementJson, OutputIsDeterministicAndSorted) {
  const std::string expected = R"({
  "enablement": [
    {
      "agent": true,
      "args": [
        "--port",
        "8080"
      ],
      "env": {
        "A": "1",
        "B": "2"
      },
      "keep_alive": true,
      "name": "s",
      "program": "/bin/s"
    }
  ],
  "schema": "lume-unlock/enablement/v1"
}
)";
  EnablementList list;
  EnablementEntry entry;
  entry.name = "s";
  entry.program = "/bin/s";
  entry.args = {"--port", "8080"};
  entry.env["B"] = "2";
  entry.env["A"] = "1";
  list.entries = {entry};
  EXPECT_EQ(render_enablement_json(list), expected);
  EXPECT_EQ(render_enablement_json(list), render_enablement_json(list));
}

TEST(EnablementJson, KeepsNonAsciiAsUtf8) {
  const std::string text = render_enablement_json(sample_list());
  EXPECT_NE(text.find("g\xc3\xa9mma"), std::string::npos);
}

TEST(EnablementJson, AListAppliedBeforeResolutionStaysReadable) {
  const auto list = parse_enablement_json(
      R"({"schema":"lume-unlock/enablement/v1","enablement":[{"name":"a","program":"/opt/a",)"
      R"("args":[],"agent":false,"keep_alive":false,"env":{}}]})",
      "enablement.json");
  ASSERT_TRUE(list.ok()) << list.error().message();
  EXPECT_FALSE(list.value().entries.at(0).resolved_program);
  EXPECT_EQ(guarded_path(list.value().entries.at(0)), "/opt/a");
  EXPECT_EQ(render_enablement_json(list.value()).find("resolved_program"), std::string::npos)
      << "an unresolved entry is written without the key";
}

TEST(EnablementJson, ErrorsNameTheSourceAndThePath) {
  struct Case {
    const char* label;
    std::string text;
    std::string message;
  };
  const std::string head = R"({"schema":"lume-unlock/enablement/v1","enablement":[)";
  const std::string entry_fields = R"("agent":true,"keep_alive":true,"env":{})";
  const Case cases[] = {
      {"not JSON", "{", "enablement.json: /: not valid JSON: it ends early, after 1 bytes"},
      {"not an object", "[]", "enablement.json: /: expected an object, got an array"},
      // Found by enablement_json_fuzz: nlohmann throws out_of_range, not parse_error, for a
      // number beyond double's range, and the uncaught exception aborted the process.
      {"number out of range",
       R"({"schema":1e99999})",
       "enablement.json: /: not valid JSON: a number is out of range (number overflow parsing "
       "'1e99999')"},
      {"other schema",
       R"({"schema":"lume-unlock/enablement/v2","enablement":[]})",
       "enablement.json: /schema: unsupported schema 'lume-unlock/enablement/v2' (expected "
       "'lume-unlock/enablement/v1')"},
      {"unknown top-level key",
       R"({"schema":"lume-unlock/enablement/v1","enablement":[],"x":1})",
       "enablement.json: /x: unknown key"},
      {"missing args",
       head + R"({"name":"a","program":"/a",)" + entry_fields + "}]}",
       "enablement.json: /enablement/0/args: missing (expected an array of strings)"},
      {"number in args",
       head + R"({"name":"a","program":"/a","args":[1],)" + entry_fields + "}]}",
       "enablement.json: /enablement/0/args/0: expected a string, got an integer"},
      {"string agent",
       head + R"({"name":"a","program":"/a","args":[],"agent":"yes","keep_alive":true,"env":{}}]})",
       "enablement.json: /enablement/0/agent: expected a boolean, got a string"},
      {"negative profile",
       head + R"({"name":"a","program":"/a","args":[],)" + entry_fields +
           R"(,"profile":{"apple_family_max":-1,"max_threadgroup_memory":1}}]})",
       "enablement.json: /enablement/0/profile/apple_family_max: expected a non-negative "
       "integer, got an integer"},
      {"env key as a JSON Pointer token",
       head +
           R"({"name":"a","program":"/a","args":[],"agent":true,"keep_alive":true,"env":{"a/b~":1}}]})",
       "enablement.json: /enablement/0/env/a~1b~0: expected a string, got an integer"},
      {"rule violation",
       head + R"({"name":"a","program":"a","args":[],)" + entry_fields + "}]}",
       "enablement.json: enablement entry 'a': program 'a' is not an absolute path"},
      {"relative resolved_program",
       head + R"({"name":"a","program":"/a","resolved_program":"a","args":[],)" + entry_fields +
           "}]}",
       "enablement.json: enablement entry 'a': resolved_program: program 'a' is not an absolute "
       "path"},
      {"number as resolved_program",
       head + R"({"name":"a","program":"/a","resolved_program":1,"args":[],)" + entry_fields +
           "}]}",
       "enablement.json: /enablement/0/resolved_program: expected a string, got an integer"},
      {"reserved env",
       head +
           R"({"name":"a","program":"/a","args":[],"agent":true,"keep_alive":true,"env":{"LUME_X":"1"}}]})",
       "enablement.json: enablement entry 'a': env key 'LUME_X' is reserved (DYLD_*, LD_PRELOAD "
       "and LUME_* are set by lume-unlock)"},
  };
  for (const Case& c : cases) {
    const auto list = parse_enablement_json(c.text, "enablement.json");
    ASSERT_FALSE(list.ok()) << c.label;
    EXPECT_EQ(list.error().message(), c.message) << c.label;
    EXPECT_EQ(list.error().category(), ErrorCategory::usage) << c.label;
  }
}

} // namespace
} // namespace lume_unlock::enablement
