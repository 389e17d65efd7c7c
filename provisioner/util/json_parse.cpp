#include "json_parse.hpp"

namespace lume_unlock::util {

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

} // namespace lume_unlock::util
