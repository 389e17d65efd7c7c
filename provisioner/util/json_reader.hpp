#pragma once

// The one typed reader of JSON documents. Every problem is reported the same way, whichever
// document it is: Error(category, what, "<pointer>: <problem>", hint), where <pointer> is an RFC
// 6901 JSON pointer ("/diskSize/total", "/enablement/2/args/0"; the whole document is "/") and
// <problem> reads "expected a string, got an integer", "missing (expected a string)", "unknown
// key" (hinted "did you mean …?") or what the caller's own check says.

#include "util/error.hpp"
#include "util/result.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace lume_unlock::util {

/// Why a text is not one JSON document.
struct JsonSyntaxError {
  enum class Kind {
    syntax,       ///< not JSON at `byte`
    truncated,    ///< the text ends before the JSON does
    out_of_range, ///< a number beyond double's range, such as 1e999
  };
  Kind kind = Kind::syntax;
  std::size_t byte = 0; ///< where parsing stopped (0 when nlohmann does not say)
  std::string reason;   ///< nlohmann's explanation without its "[json.exception…] " prefix
};

/// The outcome of parse_json: a document, or why there is none.
struct JsonParsed {
  nlohmann::json value; ///< discarded when `error` is set
  std::optional<JsonSyntaxError> error;

  bool ok() const { return !error.has_value(); }
};

/// Parses `text` as one JSON document: the one entry point for every JSON lume-unlock reads
/// (host files, guest files, registry and Lume answers). Never throws: a syntax error, a text cut
/// short and a number beyond double's range all come back in `error` (issue 27).
JsonParsed parse_json(std::string_view text);

/// "at byte 12: syntax error …", "it ends early, after 40 bytes" or "a number is out of range
/// (number overflow parsing '1e999')": the error in words, for a caller's message.
std::string describe_json_error(const JsonSyntaxError& error, std::size_t text_size);

/// How a bad document is reported: its Error's category, what failed ("invalid bundle.json",
/// "" when the caller adds the operation) and the hint when the problem brings none.
struct JsonDocument {
  ErrorCategory category;
  std::string what;
  std::string hint = {};
};

/// Thrown by JsonValue and JsonObject, caught by read_json, which turns it into the Error.
struct JsonShapeError {
  std::string pointer;
  std::string problem;
  std::string hint;
};

/// "a string", "an integer", "a fractional number", "null", ...: a value's type in a message.
std::string json_type_name(const nlohmann::json& value);

class JsonObject;

/// One value of a document and its pointer. The typed getters fail with "expected …, got …".
class JsonValue {
public:
  JsonValue(const nlohmann::json& value, std::string pointer);

  const nlohmann::json& json() const { return *m_value; }
  const std::string& pointer() const { return m_pointer; }

  std::string string() const;
  std::int64_t integer() const;
  std::uint64_t unsigned_integer() const; ///< a whole number of at least 0
  double number() const;
  bool boolean() const;
  JsonObject object() const;
  std::vector<JsonValue> array() const;
  std::vector<std::string> strings() const; ///< an array of strings

  /// Fails at this value: "<pointer>: <problem>".
  [[noreturn]] void fail(const std::string& problem, const std::string& hint = {}) const;
  [[noreturn]] void wrong_type(const char* expected) const;

private:
  const nlohmann::json* m_value;
  std::string m_pointer;
};

/// A JSON object's members by key. Absent and null are the same to the optional getters.
class JsonObject {
public:
  explicit JsonObject(JsonValue value) : m_value(std::move(value)) {}

  const JsonValue& value() const { return m_value; }
  /// Fails at the first key outside `known`: "unknown key", hinted "did you mean …?".
  const JsonObject& only(std::initializer_list<const char*> known) const;
  /// The member, required: missing fails "missing (expected <expected>)".
  JsonValue at(const std::string& key, const char* expected = "a value") const;
  /// The member, or nothing when it is absent or null.
  std::optional<JsonValue> find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key).has_value(); }
  /// Every member in key order (a map such as "env" or "platforms").
  std::vector<std::pair<std::string, JsonValue>> members() const;

  std::string string(const std::string& key) const { return at(key, "a string").string(); }
  std::uint64_t unsigned_integer(const std::string& key) const {
    return at(key, "a non-negative integer").unsigned_integer();
  }
  bool boolean(const std::string& key) const { return at(key, "a boolean").boolean(); }
  JsonObject object(const std::string& key) const;
  std::vector<JsonValue> array(const std::string& key) const { return at(key, "an array").array(); }

  /// The member through `get` (&JsonValue::string, ...), or nothing when absent or null.
  template <class T>
  std::optional<T> optional(const std::string& key, T (JsonValue::*get)() const) const {
    const auto found = find(key);
    return found ? std::optional<T>(((*found).*get)()) : std::nullopt;
  }
  std::optional<std::string> optional_string(const std::string& key) const {
    return optional(key, &JsonValue::string);
  }

  [[noreturn]] void fail(const std::string& problem, const std::string& hint = {}) const {
    m_value.fail(problem, hint);
  }

private:
  JsonValue m_value;
};

/// The Error of a shape problem in `document`.
Error json_shape_error(const JsonDocument& document, const JsonShapeError& shape);

/// Runs `read(JsonValue)` over `value`; a shape problem comes back as the document's Error.
template <class F>
auto read_json(const nlohmann::json& value, const JsonDocument& document, F&& read)
    -> Result<std::decay_t<decltype(read(std::declval<JsonValue>()))>> {
  try {
    return read(JsonValue(value, ""));
  } catch (const JsonShapeError& shape) {
    return json_shape_error(document, shape);
  }
}

/// The Error for a text that is not JSON: "/: not valid JSON: at byte 3: …".
Error json_syntax_error(const JsonDocument& document, const JsonParsed& parsed, std::size_t size);

/// Parses `text` (parse_json) and reads it with read_json.
template <class F>
auto read_json_text(std::string_view text, const JsonDocument& document, F&& read)
    -> decltype(read_json(nlohmann::json(), document, std::forward<F>(read))) {
  const JsonParsed parsed = parse_json(text);
  if (!parsed.ok()) {
    return json_syntax_error(document, parsed, text.size());
  }
  return read_json(parsed.value, document, std::forward<F>(read));
}

} // namespace lume_unlock::util
