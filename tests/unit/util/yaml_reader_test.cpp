#include "util/yaml_reader.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace lume_unlock::util {
namespace {

/// Walks `text` with `walk` and returns the refusal as "message | hint" ("" when accepted).
template <class Walk>
std::string refusal(const std::string& text, Walk walk) {
  const YamlReader reader("doc.yaml");
  const auto result = reader.run([&] {
    walk(reader, reader.document(text, "the document", "write something"));
    return 0;
  });
  if (result.ok()) {
    return "";
  }
  EXPECT_EQ(result.error().category(), ErrorCategory::usage);
  const std::string hint = result.error().hint();
  return result.error().message() + (hint.empty() ? "" : " | " + hint);
}

/// A key table: `count` (1..9), `name`, `on` (boolean), `tags` (strings), `env` (free keys).
struct Sample {
  long long count = 0;
  std::string name;
  bool on = false;
  std::vector<std::string> tags;
  std::map<std::string, std::string> env;
};

void read_sample(const YamlReader& r, const YAML::Node& root, Sample& out) {
  r.mapping(root,
            "",
            {{"count", [&](auto& v, auto& f) { out.count = r.integer(v, f, 1, 9); }},
             {"name", [&](auto& v, auto& f) { out.name = r.string(v, f); }},
             {"on", [&](auto& v, auto& f) { out.on = r.boolean(v, f, "on: true"); }},
             {"tags",
              [&](auto& v, auto& f) {
                r.sequence(v, f, [&](auto& t, auto& tf) { out.tags.push_back(r.text(t, tf)); });
              }},
             {"env", [&](auto& v, auto& f) {
                r.entries(v, f, [&](auto&, const std::string& key, auto& value) {
                  out.env[key] = r.text(value, f + "." + key);
                });
              }}});
}

std::string sample_refusal(const std::string& text) {
  Sample ignored;
  return refusal(
      text, [&](const YamlReader& r, const YAML::Node& root) { read_sample(r, root, ignored); });
}

TEST(YamlReader, ReadsTypedValues) {
  Sample s;
  EXPECT_EQ(refusal("count: 0x9\nname: n\non: True\ntags: [a, '', 8080]\nenv: {K: v, L: ''}\n",
                    [&](const YamlReader& r, const YAML::Node& root) { read_sample(r, root, s); }),
            "");
  EXPECT_EQ(s.count, 9);
  EXPECT_EQ(s.name, "n");
  EXPECT_TRUE(s.on);
  EXPECT_EQ(s.tags, (std::vector<std::string>{"a", "", "8080"})) << "numbers keep their text";
  EXPECT_EQ(s.env, (std::map<std::string, std::string>{{"K", "v"}, {"L", ""}}));
}

TEST(YamlReader, EveryRefusalNamesFileLineColumnAndField) {
  const std::pair<const char*, const char*> cases[] = {
      {"cont: 1\n",
       "doc.yaml:1:1: cont: unknown key | did you mean 'count'? (known keys here: count, name, on, "
       "tags, env)"},
      {"zzz: 1\n", "doc.yaml:1:1: zzz: unknown key | known keys here: count, name, on, tags, env"},
      {"name: a\nname: b\n", "doc.yaml:2:1: name: is given twice"},
      {"env: {K: a, K: b}\n", "doc.yaml:1:13: env.K: is given twice"},
      {"env: [K]\n", "doc.yaml:1:6: env: must be a mapping of keys to values"},
      {"- a\n", "doc.yaml:1:1: must be a mapping of keys to values"},
      {"count: 10\n", "doc.yaml:1:8: count: 10 is out of range (1 to 9)"},
      {"count: 010\n", "doc.yaml:1:8: count: '010' is not a whole number from 1 to 9"},
      {"count: '5'\n", "doc.yaml:1:8: count: must be a whole number from 1 to 9"},
      {"count: [5]\n", "doc.yaml:1:8: count: must be a whole number from 1 to 9"},
      {"name: ''\n", "doc.yaml:1:7: name: must be a non-empty string"},
      {"name: ~\n", "doc.yaml:1:7: name: must be a non-empty string"},
      {"on: yes\n", "doc.yaml:1:5: on: must be true or false | on: true"},
      {"on: 'true'\n", "doc.yaml:1:5: on: must be true or false | on: true"},
      {"tags: a\n", "doc.yaml:1:7: tags: must be a list"},
      {"tags: [a, [b]]\n", "doc.yaml:1:11: tags[1]: must be a string"},
      {"tags: [\n", "doc.yaml:2:1: invalid YAML: end of sequence flow not found"},
      {"", "doc.yaml: the document is empty | write something"},
      {"~\n", "doc.yaml: the document is empty | write something"},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_EQ(sample_refusal(text), message) << text;
  }
}

TEST(YamlReader, ParsedValuesReportTheParsersErrorAtTheNode) {
  const std::function<Result<double>(std::string_view, const std::string&)> parse =
      [](std::string_view text, const std::string& field) -> Result<double> {
    if (text == "1.5") {
      return 1.5;
    }
    return Error(ErrorCategory::usage, field, "is not 1.5", "write 1.5");
  };
  double value = 0;
  const auto read = [&](const YamlReader& r, const YAML::Node& root) {
    r.mapping(
        root, "", {{"x", [&](auto& v, auto& f) { value = r.parsed<double>(v, f, parse, "1.5"); }}});
  };
  EXPECT_EQ(refusal("x: 1.5\n", read), "");
  EXPECT_EQ(value, 1.5);
  EXPECT_EQ(refusal("x: 2\n", read), "doc.yaml:1:4: x: is not 1.5 | write 1.5");
  EXPECT_EQ(refusal("x: ''\n", read), "doc.yaml:1:4: x: must be a number | for example 1.5");
}

TEST(YamlReader, FailAtAMarkAndWhereWithoutOne) {
  const YamlReader reader("doc.yaml");
  EXPECT_EQ(reader.where(YAML::Node()), "doc.yaml");
  const YAML::Node root = YAML::Load("a:\n  b: 1\n");
  EXPECT_EQ(reader.where(root["a"]["b"]), "doc.yaml:2:6");
  const auto failed = reader.run([&]() -> int { reader.fail(root["a"], "a", "why", "hint"); });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message(), "doc.yaml:2:3: a: why");
  EXPECT_EQ(failed.error().hint(), "hint");
}

} // namespace
} // namespace lume_unlock::util
