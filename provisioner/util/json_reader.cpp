#include "util/json_reader.hpp"

#include "util/text.hpp"

#include <algorithm>

namespace lume_unlock::util {

using nlohmann::json;

namespace {

/// nlohmann's what() starts with "[json.exception.parse_error.101] "; the reader needs the rest.
std::string without_exception_prefix(const char* what) {
  std::string text = what;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find("] ");
    if (close != std::string::npos) {
      text.erase(0, close + 2);
    }
  }
  return text;
}

/// A key as a pointer token (RFC 6901: '~' is "~0", '/' is "~1").
std::string pointer_token(const std::string& key) {
  std::string token;
  for (char c : key) {
    token += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  }
  return token;
}

} // namespace

JsonParsed parse_json(std::string_view text) {
  JsonParsed parsed;
  try {
    parsed.value = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports one past the end when the text stops early.
    const bool truncated = e.byte > text.size();
    parsed.error = JsonSyntaxError{truncated ? JsonSyntaxError::Kind::truncated
                                             : JsonSyntaxError::Kind::syntax,
                                   e.byte,
                                   without_exception_prefix(e.what())};
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406: a number that no double holds.
    parsed.error =
        JsonSyntaxError{JsonSyntaxError::Kind::out_of_range, 0, without_exception_prefix(e.what())};
  }
  if (!parsed.ok()) {
    // Callers that only ask is_discarded() see what nlohmann's non-throwing parse gives.
    parsed.value = nlohmann::json(nlohmann::json::value_t::discarded);
  }
  return parsed;
}

std::string describe_json_error(const JsonSyntaxError& error, std::size_t text_size) {
  switch (error.kind) {
  case JsonSyntaxError::Kind::truncated:
    return "it ends early, after " + std::to_string(text_size) + " bytes";
  case JsonSyntaxError::Kind::out_of_range:
    return "a number is out of range (" + error.reason + ")";
  case JsonSyntaxError::Kind::syntax:
    break;
  }
  return "at byte " + std::to_string(error.byte) + ": " + error.reason;
}

std::string json_type_name(const json& value) {
  switch (value.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "an integer";
  case json::value_t::number_float:
    return "a fractional number";
  case json::value_t::string:
    return "a string";
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "something else";
  }
}

JsonValue::JsonValue(const nlohmann::json& value, std::string pointer)
    : m_value(&value), m_pointer(std::move(pointer)) {}

void JsonValue::fail(const std::string& problem, const std::string& hint) const {
  throw JsonShapeError{m_pointer, problem, hint};
}

void JsonValue::wrong_type(const char* expected) const {
  fail(std::string("expected ") + expected + ", got " + json_type_name(*m_value));
}

std::string JsonValue::string() const {
  if (!m_value->is_string()) {
    wrong_type("a string");
  }
  return m_value->get<std::string>();
}

std::int64_t JsonValue::integer() const {
  if (!m_value->is_number_integer() ||
      (m_value->is_number_unsigned() && m_value->get<std::uint64_t>() > INT64_MAX)) {
    wrong_type("an integer");
  }
  return m_value->get<std::int64_t>();
}

std::uint64_t JsonValue::unsigned_integer() const {
  // A value built in C++ from a signed int is number_integer even when it is not negative.
  if (!m_value->is_number_unsigned() &&
      !(m_value->is_number_integer() && m_value->get<std::int64_t>() >= 0)) {
    wrong_type("a non-negative integer");
  }
  return m_value->get<std::uint64_t>();
}

double JsonValue::number() const {
  if (!m_value->is_number()) {
    wrong_type("a number");
  }
  return m_value->get<double>();
}

bool JsonValue::boolean() const {
  if (!m_value->is_boolean()) {
    wrong_type("a boolean");
  }
  return m_value->get<bool>();
}

JsonObject JsonValue::object() const {
  if (!m_value->is_object()) {
    wrong_type("an object");
  }
  return JsonObject(*this);
}

std::vector<JsonValue> JsonValue::array() const {
  if (!m_value->is_array()) {
    wrong_type("an array");
  }
  std::vector<JsonValue> items;
  for (std::size_t i = 0; i < m_value->size(); ++i) {
    items.emplace_back((*m_value)[i], m_pointer + "/" + std::to_string(i));
  }
  return items;
}

std::vector<std::string> JsonValue::strings() const {
  std::vector<std::string> out;
  for (const JsonValue& item : array()) {
    out.push_back(item.string());
  }
  return out;
}

const JsonObject& JsonObject::only(std::initializer_list<const char*> known) const {
  const std::vector<std::string> names(known.begin(), known.end());
  for (const auto& [key, value] : members()) {
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      value.fail("unknown key", unknown_key_hint(key, names));
    }
  }
  return *this;
}

JsonValue JsonObject::at(const std::string& key, const char* expected) const {
  const json& object = m_value.json();
  const auto it = object.find(key);
  const std::string pointer = m_value.pointer() + "/" + pointer_token(key);
  if (it == object.end()) {
    throw JsonShapeError{pointer, std::string("missing (expected ") + expected + ")", ""};
  }
  return JsonValue(*it, pointer);
}

std::optional<JsonValue> JsonObject::find(const std::string& key) const {
  const auto it = m_value.json().find(key);
  if (it == m_value.json().end() || it->is_null()) {
    return std::nullopt;
  }
  return JsonValue(*it, m_value.pointer() + "/" + pointer_token(key));
}

std::vector<std::pair<std::string, JsonValue>> JsonObject::members() const {
  std::vector<std::pair<std::string, JsonValue>> out;
  for (const auto& [key, value] : m_value.json().items()) {
    out.emplace_back(key, JsonValue(value, m_value.pointer() + "/" + pointer_token(key)));
  }
  return out;
}

JsonObject JsonObject::object(const std::string& key) const {
  return at(key, "an object").object();
}

Error json_shape_error(const JsonDocument& document, const JsonShapeError& shape) {
  return Error(document.category,
               document.what,
               (shape.pointer.empty() ? "/" : shape.pointer) + ": " + shape.problem,
               shape.hint.empty() ? document.hint : shape.hint);
}

Error json_syntax_error(const JsonDocument& document, const JsonParsed& parsed, std::size_t size) {
  return json_shape_error(document,
                          {"", "not valid JSON: " + describe_json_error(*parsed.error, size), ""});
}

} // namespace lume_unlock::util
