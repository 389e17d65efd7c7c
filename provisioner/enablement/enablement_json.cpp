#include "enablement_json.hpp"

#include "util/json_parse.hpp"
#include "util/text_check.hpp"

#include <algorithm>

namespace lume_unlock::enablement {

namespace {

using nlohmann::json;

struct ShapeError {
  std::string pointer;
  std::string why;
};

const json& member(const json& object, const std::string& key, const std::string& pointer) {
  const auto it = object.find(key);
  if (it == object.end()) {
    throw ShapeError{pointer, "key '" + key + "' is missing"};
  }
  return *it;
}

std::string as_string(const json& value, const std::string& pointer) {
  if (!value.is_string()) {
    throw ShapeError{pointer, "must be a string"};
  }
  return value.get<std::string>();
}

bool as_bool(const json& value, const std::string& pointer) {
  if (!value.is_boolean()) {
    throw ShapeError{pointer, "must be true or false"};
  }
  return value.get<bool>();
}

std::uint64_t as_unsigned(const json& value, const std::string& pointer) {
  if (!value.is_number_unsigned()) {
    throw ShapeError{pointer, "must be a non-negative integer"};
  }
  return value.get<std::uint64_t>();
}

void only_keys(const json& object,
               const std::vector<std::string>& keys,
               const std::string& pointer) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      throw ShapeError{pointer, "unknown key " + util::quote_for_message(it.key())};
    }
  }
}

/// A key as a JSON Pointer token (RFC 6901: '~' → "~0", '/' → "~1").
std::string pointer_token(const std::string& key) {
  std::string token;
  for (char c : key) {
    token += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  }
  return token;
}

EnablementEntry entry_from_json(const json& value, const std::string& pointer) {
  if (!value.is_object()) {
    throw ShapeError{pointer, "must be an object"};
  }
  only_keys(
      value,
      {"name", "program", "resolved_program", "args", "agent", "keep_alive", "env", "profile"},
      pointer);
  EnablementEntry entry;
  entry.name = as_string(member(value, "name", pointer), pointer + "/name");
  entry.program = as_string(member(value, "program", pointer), pointer + "/program");
  // Absent in lists applied before programs were resolved: they stay readable.
  if (const auto it = value.find("resolved_program"); it != value.end()) {
    entry.resolved_program = as_string(*it, pointer + "/resolved_program");
  }
  const json& args = member(value, "args", pointer);
  if (!args.is_array()) {
    throw ShapeError{pointer + "/args", "must be a list of strings"};
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    entry.args.push_back(as_string(args[i], pointer + "/args/" + std::to_string(i)));
  }
  entry.agent = as_bool(member(value, "agent", pointer), pointer + "/agent");
  entry.keep_alive = as_bool(member(value, "keep_alive", pointer), pointer + "/keep_alive");
  const json& env = member(value, "env", pointer);
  if (!env.is_object()) {
    throw ShapeError{pointer + "/env", "must be an object of strings"};
  }
  for (auto it = env.begin(); it != env.end(); ++it) {
    entry.env[it.key()] = as_string(it.value(), pointer + "/env/" + pointer_token(it.key()));
  }
  if (const auto it = value.find("profile"); it != value.end()) {
    const std::string profile_pointer = pointer + "/profile";
    if (!it->is_object()) {
      throw ShapeError{profile_pointer, "must be an object"};
    }
    only_keys(*it, {"apple_family_max", "max_threadgroup_memory"}, profile_pointer);
    Profile profile;
    profile.apple_family_max = as_unsigned(member(*it, "apple_family_max", profile_pointer),
                                           profile_pointer + "/apple_family_max");
    profile.max_threadgroup_memory =
        as_unsigned(member(*it, "max_threadgroup_memory", profile_pointer),
                    profile_pointer + "/max_threadgroup_memory");
    entry.profile = profile;
  }
  return entry;
}

} // namespace

nlohmann::json enablement_to_json(const EnablementList& list) {
  json entries = json::array();
  for (const EnablementEntry& entry : list.entries) {
    json item = {{"name", entry.name},
                 {"program", entry.program},
                 {"args", entry.args},
                 {"agent", entry.agent},
                 {"keep_alive", entry.keep_alive},
                 {"env", json::object()}};
    for (const auto& [key, value] : entry.env) {
      item["env"][key] = value;
    }
    if (entry.resolved_program) {
      item["resolved_program"] = *entry.resolved_program;
    }
    if (entry.profile) {
      item["profile"] = {{"apple_family_max", entry.profile->apple_family_max},
                         {"max_threadgroup_memory", entry.profile->max_threadgroup_memory}};
    }
    entries.push_back(std::move(item));
  }
  return json{{"schema", k_enablement_schema}, {"enablement", std::move(entries)}};
}

std::string render_enablement_json(const EnablementList& list) {
  // Invalid UTF-8 cannot reach here from a validated list; replacing keeps rendering total.
  return enablement_to_json(list).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<EnablementList> parse_enablement_json(std::string_view text,
                                             const std::string& source_name) {
  util::JsonParsed parsed = util::parse_json(text);
  if (!parsed.ok()) {
    // A syntax error, or a number beyond double's range.
    return Error(ErrorCategory::usage, source_name, "invalid JSON: " + parsed.error->reason);
  }
  const json document = std::move(parsed.value);
  EnablementList list;
  try {
    if (!document.is_object()) {
      throw ShapeError{"", "must be an object"};
    }
    only_keys(document, {"schema", "enablement"}, "");
    const std::string schema = as_string(member(document, "schema", ""), "/schema");
    if (schema != k_enablement_schema) {
      throw ShapeError{"/schema",
                       "unsupported schema " + util::quote_for_message(schema) + " (expected '" +
                           std::string(k_enablement_schema) + "')"};
    }
    const json& entries = member(document, "enablement", "");
    if (!entries.is_array()) {
      throw ShapeError{"/enablement", "must be a list of entries"};
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      list.entries.push_back(entry_from_json(entries[i], "/enablement/" + std::to_string(i)));
    }
  } catch (const ShapeError& e) {
    return Error(
        ErrorCategory::usage, source_name + ": " + (e.pointer.empty() ? "/" : e.pointer), e.why);
  }
  if (auto found = find_violation(list)) {
    return violation_error(entry_label(list, found->index), found->violation, source_name);
  }
  return list;
}

} // namespace lume_unlock::enablement
