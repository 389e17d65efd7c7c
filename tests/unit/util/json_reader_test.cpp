#include "util/json_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lume_unlock::util {
namespace {

using nlohmann::json;

const JsonDocument k_doc{ErrorCategory::usage, "invalid thing.json", "rewrite thing.json"};

struct Thing {
  std::string name;
  std::uint64_t size = 0;
  std::optional<std::string> label;
  std::vector<std::string> tags;
  std::int64_t offset = 0;
};

Result<Thing> read_thing(const json& value) {
  return read_json(value, k_doc, [](const JsonValue& root) {
    const JsonObject object = root.object();
    object.only({"name", "size", "label", "tags", "box"});
    Thing thing;
    thing.name = object.string("name");
    thing.size = object.unsigned_integer("size");
    thing.label = object.optional_string("label");
    if (const auto box = object.find("box")) {
      thing.tags = box->object().array("tags").empty() ? std::vector<std::string>{}
                                                       : box->object().at("tags").strings();
      thing.offset = box->object().optional("offset", &JsonValue::integer).value_or(0);
    }
    return thing;
  });
}

std::string why_of(const std::string& text) {
  const auto result = read_thing(json::parse(text));
  EXPECT_FALSE(result.ok()) << text;
  return result.ok() ? "" : result.error().why();
}

TEST(JsonReader, ReadsTypedMembersAndTreatsNullAsAbsentWhenOptional) {
  const auto thing = read_thing(
      json::parse(R"({"name":"a","size":3,"label":null,"box":{"tags":["x","y"],"offset":-2}})"));
  ASSERT_TRUE(thing.ok()) << thing.error().message();
  EXPECT_EQ(thing.value().name, "a");
  EXPECT_EQ(thing.value().size, 3u);
  EXPECT_EQ(thing.value().label, std::nullopt);
  EXPECT_EQ(thing.value().tags, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(thing.value().offset, -2);
}

TEST(JsonReader, EveryProblemIsAPointerAndWhatWasExpected) {
  EXPECT_EQ(why_of(R"({"name":1,"size":3})"), "/name: expected a string, got an integer");
  EXPECT_EQ(why_of(R"({"name":"a","size":-3})"),
            "/size: expected a non-negative integer, got an integer");
  EXPECT_EQ(why_of(R"({"name":"a","size":1.5})"),
            "/size: expected a non-negative integer, got a fractional number");
  EXPECT_EQ(why_of(R"({"name":null,"size":3})"), "/name: expected a string, got null");
  EXPECT_EQ(why_of(R"({"size":3})"), "/name: missing (expected a string)");
  EXPECT_EQ(why_of(R"({"name":"a","size":3,"box":{"tags":["x",false]}})"),
            "/box/tags/1: expected a string, got a boolean");
  EXPECT_EQ(why_of(R"({"name":"a","size":3,"box":{"tags":[],"offset":"1"}})"),
            "/box/offset: expected an integer, got a string");
  EXPECT_EQ(why_of(R"({"name":"a","size":3,"box":[]})"), "/box: expected an object, got an array");
  EXPECT_EQ(why_of("[]"), "/: expected an object, got an array");
}

TEST(JsonReader, AnUnknownKeySuggestsTheClosestKnownOne) {
  const auto result = read_thing(json::parse(R"({"name":"a","size":3,"labl":"x"})"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().category(), ErrorCategory::usage);
  EXPECT_EQ(result.error().message(), "invalid thing.json: /labl: unknown key");
  EXPECT_EQ(result.error().hint(),
            "did you mean 'label'? (known keys here: name, size, label, tags, box)");
  EXPECT_EQ(read_thing(json::parse(R"({"name":"a","size":1,"zzzzzzzz":1})")).error().hint(),
            "known keys here: name, size, label, tags, box");
}

TEST(JsonReader, KeysAreEscapedAsPointerTokens) {
  const auto result = read_json(json::parse(R"({"a/b":{"c~d":1}})"), k_doc, [](JsonValue root) {
    return root.object().object("a/b").string("c~d");
  });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().why(), "/a~1b/c~0d: expected a string, got an integer");
  EXPECT_EQ(result.error().hint(), "rewrite thing.json") << "the document's hint by default";
}

TEST(JsonReader, ACallersOwnCheckFailsAtTheValue) {
  const auto result = read_json(json::parse(R"({"v":[7]})"), k_doc, [](JsonValue root) {
    const JsonValue v = root.object().array("v")[0];
    v.fail("7 is odd", "use an even number");
    return 0;
  });
  EXPECT_EQ(result.error().why(), "/v/0: 7 is odd");
  EXPECT_EQ(result.error().hint(), "use an even number");
}

TEST(JsonReader, TextThatIsNotJsonIsTheSameKindOfError) {
  const auto result = read_json_text("{\"a\":", k_doc, [](JsonValue root) { return root.json(); });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message(),
            "invalid thing.json: /: not valid JSON: it ends early, after 5 bytes");
  EXPECT_EQ(result.error().category(), ErrorCategory::usage);
  const auto good =
      read_json_text("[1]", k_doc, [](JsonValue root) { return root.array().size(); });
  EXPECT_EQ(good.value(), 1u);
}

} // namespace
} // namespace lume_unlock::util
